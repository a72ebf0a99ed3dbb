import { describe, expect, it } from 'vitest';
import { BUCKET_US, bucketRuns } from '../../src/core/time.js';

describe('bucketRuns', () => {
  it('is empty for no buckets', () => {
    expect(bucketRuns([])).toEqual([]);
  });

  it('joins adjacent buckets into one half-open microsecond run and splits at gaps', () => {
    expect(bucketRuns([3, 4, 5, 9, 11, 12])).toEqual([
      [3 * BUCKET_US, 6 * BUCKET_US],
      [9 * BUCKET_US, 10 * BUCKET_US],
      [11 * BUCKET_US, 13 * BUCKET_US],
    ]);
  });

  it('keeps one bucket as a run of one bucket', () => {
    expect(bucketRuns([5_900_000])).toEqual([[5_900_000 * BUCKET_US, 5_900_001 * BUCKET_US]]);
  });
});
