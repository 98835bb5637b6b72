import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The slowest files first, so that with two workers the long ones run alongside the many short ones instead of
 * at the end. Their order here is by duration (longest first, measured 2026-11-26); every other file keeps vitest's own
 * order (by its last duration, or by size on a fresh clone, which has no record of durations).
 */
const SLOWEST = [
  'test/e2e/console.test.ts',
  'test/two-instances.test.ts',
  'test/e2e/integrations-io.test.ts',
  'test/e2e/sales-workspace.test.ts',
  'test/start-up.test.ts',
  'test/seed-demo.test.ts',
  'test/e2e/undo.test.ts',
  'test/crm-campaign-crash.test.ts',
  'test/admin-cli.test.ts',
  'test/fuzz.test.ts',
  'test/dates-roundtrip.test.ts',
  'test/auth-reset.test.ts',
  'test/webhooks.test.ts',
];

const rank = (spec: TestSpecification) => {
  const path = spec.moduleId.replace(/\\/g, '/');
  const index = SLOWEST.findIndex((file) => path.endsWith(`/${file}`));
  return index < 0 ? SLOWEST.length : index;
};

export default class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    // Array.prototype.sort is stable: files outside SLOWEST keep the base order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
