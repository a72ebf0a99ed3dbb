// The TCPDBench scorer (src/detect/bocpd/metrics.ts) against metrics.py's own doctests, CPython's
// set iteration order, and TCPDBench's published "zero" baseline on the shared TCPD series.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CORPORA_DIR } from '../../src/core/paths.js';
import { corpusPresent } from '../helpers/corpora.js';
import { PySet, coverSingle, covering, fMeasure, partitionFromCps, truePositives } from '../../src/detect/bocpd/metrics.js';

describe('TCPDBench metrics', () => {
  it('true_positives doctests', () => {
    expect([...truePositives(new PySet([1, 10, 20, 23]), [3, 8, 20])].sort((a, b) => a - b)).toEqual([1, 10, 20]);
    expect([...truePositives(new PySet([1, 10, 20, 23]), [1, 3, 8, 20])].sort((a, b) => a - b)).toEqual([1, 10, 20]);
    expect([...truePositives(new PySet([1, 10, 20, 23]), [1, 3, 5, 8, 20])].sort((a, b) => a - b)).toEqual([1, 10, 20]);
    expect(truePositives(new PySet(), [1, 2, 3]).size).toBe(0);
    expect(truePositives(new PySet([1, 2, 3]), []).size).toBe(0);
  });

  it('f_measure doctests', () => {
    expect(fMeasure({ 1: [10, 20], 2: [11, 20], 3: [10], 4: [0, 5] }, [10, 20]).f1).toBe(1.0);
    expect(fMeasure({ 1: [], 2: [10], 3: [50] }, [10]).f1).toBeCloseTo(0.9090909090909091, 15);
    expect(fMeasure({ 1: [], 2: [10], 3: [50] }, []).f1).toBeCloseTo(0.8, 15);
  });

  it('partition and covering doctests', () => {
    expect(partitionFromCps([3, 5], 8)).toEqual([
      [0, 3],
      [3, 5],
      [5, 8],
    ]);
    expect(partitionFromCps([0, 4], 6)).toEqual([
      [0, 4],
      [4, 6],
    ]);
    // cover_single([{1,2,3},{4,5},{6}], [{1,2,3},{4,5,6}]) with elements 1..6 as [1,7)
    expect(coverSingle([[1, 4], [4, 6], [6, 7]], [[1, 4], [4, 7]], 6)).toBeCloseTo(0.8333333333333334, 15);
    expect(coverSingle([[1, 7]], [[1, 2], [2, 3], [3, 4], [4, 7]], 6)).toBeCloseTo(0.3333333333333333, 15);
    expect(covering({ 1: [10, 20], 2: [10], 3: [0, 5] }, [10, 20], 45)).toBeCloseTo(0.7962962962962963, 15);
    expect(covering({ 1: [], 2: [10], 3: [40] }, [10], 45)).toBeCloseTo(0.7954144620811286, 15);
    expect(covering({ 1: [], 2: [10], 3: [40] }, [], 45)).toBeCloseTo(0.8189300411522634, 15);
  });

  it('PySet iterates like a CPython set (orders printed by python3)', () => {
    const cases: Array<[number[], number[]]> = [
      [[331, 154, 404], [0, 154, 331, 404]],
      [[49, 74, 548, 96, 374, 596], [96, 0, 548, 74, 49, 596, 374]],
      [[59, 519, 219, 38, 88, 444, 428, 71, 246, 92], [0, 38, 519, 71, 428, 219, 92, 246, 88, 59, 444]],
      [[564, 434, 60, 579, 126, 228, 596, 63, 590, 599, 406, 50, 226, 47], [0, 226, 579, 228, 590, 47, 434, 50, 564, 596, 406, 599, 60, 126, 63]],
      [
        [570, 136, 296, 429, 147, 553, 120, 584, 315, 573, 185, 105, 595, 584, 192, 381, 99, 560, 64, 577],
        [0, 136, 147, 296, 553, 429, 560, 185, 570, 315, 573, 192, 64, 577, 584, 595, 99, 105, 120, 381],
      ],
    ];
    for (const [items, order] of cases) {
      const s = new PySet(items);
      s.add(0);
      expect([...s]).toEqual(order);
    }
  });

  it('the visiting order decides contested matches, as in metrics.py', () => {
    // CPython keeps {15, 18} in an 8-slot table: 18 (slot 2) is visited before 15 (slot 7), takes 17,
    // and 15 is left without a prediction within 5; ascending order would have matched both.
    const T = new PySet([15, 18]);
    expect([...T]).toEqual([18, 15]);
    expect([...truePositives(T, [17, 21])]).toEqual([18]);
  });

  const tcpd = join(CORPORA_DIR, 'tcpd');
  it.skipIf(!corpusPresent(tcpd))('reproduces TCPDBench\'s published "zero" baseline on the shared TCPD series (needs ../shared/corpora/tcpd)', () => {
    const ann = JSON.parse(readFileSync(join(tcpd, 'annotations.json'), 'utf8')) as Record<string, Record<string, number[]>>;
    const table = (f: string): Map<string, number> =>
      new Map(
        readFileSync(join(tcpd, 'tcpdbench_results', f), 'utf8')
          .trim()
          .split('\n')
          .slice(1)
          .map((l) => {
            const c = l.split(',');
            return [c[0]!, Number(c[c.length - 1])];
          }),
      );
    const f1 = table('default_f1_combined_full.csv');
    const cov = table('default_cover_combined_full.csv');
    let checked = 0;
    for (const name of readdirSync(join(tcpd, 'datasets'))) {
      const n = (JSON.parse(readFileSync(join(tcpd, 'datasets', name, `${name}.json`), 'utf8')) as { n_obs: number }).n_obs;
      if (!ann[name] || !f1.has(name)) continue;
      expect(Math.abs(fMeasure(ann[name], []).f1 - f1.get(name)!)).toBeLessThanOrEqual(0.0005);
      expect(Math.abs(covering(ann[name], [], n) - cov.get(name)!)).toBeLessThanOrEqual(0.0005);
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(10);
  });
});
