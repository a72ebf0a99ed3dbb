import { afterEach, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { createPool, type Pool } from '../../src/compute/pool.js';

const WORKER = fileURLToPath(new URL('./young-worker.mjs', import.meta.url));
const MiB = 2 ** 20;

describe('createPool', () => {
  let pool: Pool | undefined;
  afterEach(async () => {
    await pool?.destroy();
    pool = undefined;
  });

  it("lets V8 grow a thread's new space past the cap when none is set", async () => {
    pool = createPool(1, {}, WORKER);
    expect(await pool.run({ objects: 2_000_000 })).toBeGreaterThan(8 * MiB);
  });

  it('keeps each thread\'s new space within its young generation cap', async () => {
    // V8 counts the young generation as three semi-spaces, the new space as two: 12 MiB allows 8.
    pool = createPool(1, { youngGenerationMb: 12 }, WORKER);
    expect(await pool.run({ objects: 2_000_000 })).toBeLessThanOrEqual(8 * MiB);
  });
});
