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
    // A worker runs its files one after the other in one process: the modules, the WASM builds and the
    // JIT's work are shared rather than redone for each of ~130 files (half the suite's time went to
    // that). Tests leave no global state behind (the fetch check wraps once: test/setup/).
    isolate: false,
  },
});
