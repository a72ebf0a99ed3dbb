// Golden test over real data: the generic detector on the shared TCPD series (one fixed
// configuration, as `npm run eval:changepoints` runs it) pins its change points and scores.
// Skips when ../shared/corpora/tcpd is absent; the corpus is read in place, never copied.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CORPORA_DIR } from '../../src/paths.js';
import { BocpdDetector, SIGNAL_CONFIG, standardScaling } from '../../src/detect/bocpd/index.js';
import { covering, fMeasure } from '../../src/detect/bocpd/metrics.js';

const dir = join(CORPORA_DIR, 'tcpd');
const present = existsSync(join(dir, 'annotations.json'));

function detect(values: number[]): number[] {
  return new BocpdDetector({ ...SIGNAL_CONFIG.generic, ...standardScaling(values) }).run({ values }).changes.map((c) => c.index);
}

describe.skipIf(!present)('TCPD golden (needs ../shared/corpora/tcpd)', () => {
  const ann = present ? (JSON.parse(readFileSync(join(dir, 'annotations.json'), 'utf8')) as Record<string, Record<string, number[]>>) : {};
  const load = (name: string): { n: number; dims: number[][] } => {
    const d = JSON.parse(readFileSync(join(dir, 'datasets', name, `${name}.json`), 'utf8')) as { n_obs: number; series: Array<{ raw: Array<number | null> }> };
    return { n: d.n_obs, dims: d.series.map((s) => s.raw.map((v) => (v === null ? NaN : v))) };
  };

  it('finds the annotated changes of the clear-cut series', () => {
    expect(detect(load('nile').dims[0]!)).toEqual([28]);
    expect(detect(load('quality_control_1').dims[0]!)).toEqual([144]);
    expect(detect(load('quality_control_3').dims[0]!)).toEqual([179]);
    expect(detect(load('quality_control_5').dims[0]!)).toEqual([]);
    expect(detect(load('shanghai_license').dims[0]!)).toEqual([146]);
  });

  it('mean F1 and cover over the univariate series stay at their measured values', () => {
    const f: number[] = [];
    const c: number[] = [];
    for (const name of readdirSync(join(dir, 'datasets'))) {
      const { n, dims } = load(name);
      if (dims.length !== 1 || !ann[name]) continue;
      const cps = detect(dims[0]!);
      f.push(fMeasure(ann[name], cps).f1);
      c.push(covering(ann[name], cps, n));
    }
    const mean = (a: number[]): number => a.reduce((s, x) => s + x, 0) / a.length;
    expect(f.length).toBe(15);
    expect(mean(f)).toBeCloseTo(0.7564, 3);
    expect(mean(c)).toBeCloseTo(0.7350, 3);
  });
});
