import { defineConfig } from 'vitest/config';
import SlowestFirst from './test/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Migrates once per run; every test database is a copy of that template.
    globalSetup: ['test/global-setup.ts'],
    // The service's clock ticks forward on every reading (no sleeping to order timestamps).
    setupFiles: ['test/setup.ts'],
    pool: 'forks',
    // A larger young generation: the suite allocates briskly (PGlite's protocol buffers, Fastify builds), and with V8's
    // default semi-space a tenth of a worker's time went to scavenges. Measured: test:quick 84 s → 66–73 s.
    poolOptions: { forks: { execArgv: ['--max-semi-space-size=32'] } },
    // Files share their worker's module cache: each builds its own app on its own database, so nothing leaks,
    // and the service's modules load once per worker instead of once per file.
    isolate: false,
    // Deadlines only turn a hang into a failure: far above what a test takes on a machine whose cores are busy elsewhere
    // (`npm run test:stress`), never a measure of speed.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    fileParallelism: true,
    maxWorkers: 2,
    minWorkers: 1,
    sequence: { sequencer: SlowestFirst },
  },
});
