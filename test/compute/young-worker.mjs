// A pool thread for pool.test.ts: allocates with many survivors, which makes V8 grow the thread's
// new space as far as it may, and tells how far that was.
import { getHeapSpaceStatistics } from 'node:v8';

export default function ({ objects }) {
  const keep = new Array(50_000);
  for (let i = 0; i < objects; i++) keep[i % keep.length] = { i, s: `x${i}`, a: [i, i] };
  return getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
}
