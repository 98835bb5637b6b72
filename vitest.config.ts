import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Each test file builds its own app on its own fresh database (PGlite in memory, or a new PostgreSQL database).
    fileParallelism: true,
    maxWorkers: 2,
    minWorkers: 1,
  },
});
