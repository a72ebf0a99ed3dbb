// When the scheduler runs the next pass: as soon as the next 5-minute bucket's grace has passed.
import { expect, it } from 'vitest';
import { untilNextClose } from '../../src/detect/scheduler.js';

const bucketMs = 300_000;
const t0 = Math.floor(Date.UTC(2024, 4, 6, 12) / bucketMs) * bucketMs; // a bucket start

it('waits until the current or the next bucket end plus the grace', () => {
  expect(untilNextClose(t0 + 10_000, 30)).toBe(20_000 + 5); // the bucket that ended at t0 closes at t0 + 30 s
  expect(untilNextClose(t0 + 30_000, 30)).toBe(bucketMs + 5); // just closed: the next one
  expect(untilNextClose(t0 + 200_000, 30)).toBe(bucketMs - 200_000 + 30_000 + 5);
  expect(untilNextClose(t0 + 200_000, 0)).toBe(bucketMs - 200_000 + 5);
  expect(untilNextClose(t0 - 1, 600)).toBe(1 + 5); // a grace longer than a bucket: the bucket that ended 10 minutes before t0 closes at t0
});
