// Log events per request (evidence/log-events.ts) on hand-built rows: an event that stops while its
// service keeps logging, one that appears, and the two that are not news — a service whose records
// all stopped (its logs stopped arriving), and an event as frequent as before.
import { describe, expect, it } from 'vitest';
import { prepareStructure } from '../../src/diagnose/calltree.js';
import { logEventEvidence } from '../../src/diagnose/evidence/log-events.js';
import type { TemplateBinRow, TemplateRow } from '../../src/diagnose/reads/index.js';
import { inputsOf } from './evidence-harness.js';
import { rng } from '../../testkit/rng.js';

const SEC = 1_000_000;
const BIN = 10 * SEC;
const FROM = 1_800_000_000 * SEC;
const TO = FROM + 3 * 60 * SEC;
const START = FROM - 30 * 60 * SEC;

function poisson(r: () => number, lambda: number): number {
  const l = Math.exp(-lambda);
  let k = 0;
  for (let p = r(); p > l; p *= r()) k++;
  return k;
}

/** One event's records per fine bin from START to TO at `rate(t)` a bin. */
function event(seed: number, service: string, template: number, rate: (t: number) => number): TemplateBinRow {
  const r = rng(seed);
  const row: TemplateBinRow = { service_name: service, template_id: template, bins: [], n: [] };
  for (let t = START; t < TO; t += BIN) {
    const k = poisson(r, rate(t));
    if (k > 0) {
      row.bins.push(t);
      row.n.push(k);
    }
  }
  return row;
}

const template = (id: number, service: string, pattern: string, firstUs = START - 3600 * SEC): [number, TemplateRow] => [
  id,
  { template_id: id, service_name: service, pattern, example_body: null, severity_text: 'INFO', first_us: firstUs, last_us: TO, sample_values: null },
];

const run = (rows: TemplateBinRow[], templates: [number, TemplateRow][] = []) =>
  logEventEvidence(inputsOf(prepareStructure([], [], [], FROM, TO), 'frontend', { templateBins: rows, templates: new Map(templates) }));

describe('log events per request', () => {
  it('names the service whose event stopped while its other events go on (the code after a throw no longer runs)', () => {
    const out = run(
      [event(1, 'checkout', 1, () => 4), event(2, 'checkout', 2, (t) => (t >= FROM ? 0 : 4)), event(3, 'cart', 3, () => 6)],
      [template(1, 'checkout', 'placing order <*> started'), template(2, 'checkout', 'order <*> placed')],
    );
    expect(out.map((c) => [c.service, c.what, c.kind])).toEqual([['checkout', 'event_vanished', 'log_event_vanished']]);
    expect(out[0]!.summary).toMatch(/order <\*> placed/);
    expect(out[0]!.after).toBe(0);
    expect(out[0]!.surprise).toBeGreaterThan(10);
  });

  it('names a new event, as new when its template first appeared since the baseline began', () => {
    const out = run([event(4, 'payments', 4, () => 5), event(5, 'payments', 5, (t) => (t >= FROM ? 3 : 0))], [template(5, 'payments', 'card <*> declined: <*>', FROM + 5 * SEC)]);
    expect(out.map((c) => [c.service, c.what, c.kind])).toEqual([['payments', 'event_appeared', 'new_log_pattern']]);
  });

  it('says nothing when all of a service\'s records stopped (its logs stopped arriving), nor for steady events', () => {
    const gap = run([event(6, 'ads', 6, (t) => (t >= FROM ? 0 : 5)), event(7, 'ads', 7, (t) => (t >= FROM ? 0 : 3))]);
    expect(gap).toEqual([]);
    const steady = run([event(8, 'cart', 8, () => 5), event(9, 'cart', 9, () => 0.3), event(10, 'cart', 10, () => 12)]);
    expect(steady).toEqual([]);
  });
});
