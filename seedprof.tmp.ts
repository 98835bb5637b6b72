import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSeedDemo } from './src/cli/seed-demo.js';
const dataDir = mkdtempSync(join(tmpdir(), 'pms-seedp-'));
const t0 = performance.now();
await runSeedDemo([], { DATA_DIR: dataDir, AUTH_SECRET: 'seed-demo-secret-0123456789-0123456789', BCRYPT_COST: '4', BASE_URL: 'https://demo.example.com', LOG_LEVEL: 'silent' });
console.log((performance.now() - t0).toFixed(0), 'ms', (globalThis as any).T);
process.exit(0);
