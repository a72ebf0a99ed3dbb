import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup/validate-responses.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests start real servers on free ports; two cores means two files at once is plenty.
    maxWorkers: 2,
    pool: 'forks',
  },
});
