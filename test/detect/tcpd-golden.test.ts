// Golden test over real data: the generic detector on the shared TCPD series (one fixed
// configuration, as `npm run eval:changepoints` runs it). Every expectation comes from the human
// annotations or from the targets, never from the detector's own output.
// Skips when ../shared/corpora/tcpd is absent (fails under CI); the corpus is read in place, never copied.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CORPORA_DIR } from '../../src/core/paths.js';
import { corpusPresent } from '../helpers/corpora.js';
import { BocpdDetector, SIGNAL_CONFIG, standardScaling } from '../../src/detect/bocpd/index.js';
import { covering, fMeasure } from '../../src/detect/bocpd/metrics.js';

const dir = join(CORPORA_DIR, 'tcpd');
const present = corpusPresent(join(dir, 'annotations.json'));

function detect(values: number[]): number[] {
  return new BocpdDetector({ ...SIGNAL_CONFIG.generic, ...standardScaling(values) }).run({ values }).changes.map((c) => c.index);
}

const median = (a: number[]): number => [...a].sort((x, y) => x - y)[a.length >> 1]!;
const mean = (a: number[]): number => a.reduce((s, x) => s + x, 0) / a.length;

describe.skipIf(!present)('TCPD golden (needs ../shared/corpora/tcpd)', () => {
  const ann = present ? (JSON.parse(readFileSync(join(dir, 'annotations.json'), 'utf8')) as Record<string, Record<string, number[]>>) : {};
  const load = (name: string): { n: number; dims: number[][] } => {
    const d = JSON.parse(readFileSync(join(dir, 'datasets', name, `${name}.json`), 'utf8')) as { n_obs: number; series: Array<{ raw: Array<number | null> }> };
    return { n: d.n_obs, dims: d.series.map((s) => s.raw.map((v) => (v === null ? NaN : v))) };
  };

  it.each(['nile', 'quality_control_1', 'quality_control_3', 'quality_control_5', 'shanghai_license'])(
    'clear-cut series %s: as many changes as most annotators marked, each within 5 points of a location two of them chose',
    (name) => {
      const marks = Object.values(ann[name]!);
      const agreed = [...new Set(marks.flat())].filter((c) => marks.filter((m) => m.includes(c)).length >= 2);
      const cps = detect(load(name).dims[0]!);
      expect(cps).toHaveLength(median(marks.map((m) => m.length)));
      for (const c of cps) expect(agreed.some((a) => Math.abs(a - c) <= 5)).toBe(true);
    },
  );

  it("mean F1 and cover over the univariate series meet the issue's targets (0.80, 0.70) and beat published default BOCPD", () => {
    const pub = (file: string): Map<string, number> => {
      const [head, ...rows] = readFileSync(join(dir, 'tcpdbench_results', file), 'utf8').trim().split('\n');
      const col = head!.split(',').indexOf('bocpd');
      return new Map(rows.map((r) => [r.split(',')[0]!, Number(r.split(',')[col])]));
    };
    const pubF1 = pub('default_f1_combined_full.csv');
    const pubCover = pub('default_cover_combined_full.csv');
    const f: number[] = [];
    const c: number[] = [];
    const names: string[] = [];
    for (const name of readdirSync(join(dir, 'datasets'))) {
      const { n, dims } = load(name);
      if (dims.length !== 1 || !ann[name]) continue;
      const cps = detect(dims[0]!);
      f.push(fMeasure(ann[name], cps).f1);
      c.push(covering(ann[name], cps, n));
      names.push(name);
    }
    expect(f.length).toBe(15);
    expect(mean(f)).toBeGreaterThanOrEqual(0.8);
    expect(mean(c)).toBeGreaterThanOrEqual(0.7);
    expect(mean(f)).toBeGreaterThan(mean(names.map((s) => pubF1.get(s)!)));
    expect(mean(c)).toBeGreaterThan(mean(names.map((s) => pubCover.get(s)!)));
  });
});
