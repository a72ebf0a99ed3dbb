// Does the diagnosis name the injected cause? A few cases of the evaluation's scenario generator
// (testkit/scenario; `npm run eval:diagnose` runs all of them), each on a fresh real server with
// two hours of OTLP traffic, the detection pass run over it, and the entry service diagnosed with
// the default window. Smaller traffic than the evaluation, to keep the suite fast.
import { describe, expect, it } from 'vitest';
import { diagnose, scoreCase, withScenarioServer, type CaseSpec } from '../../testkit/scenario/index.js';

const CASES: CaseSpec[] = [
  { seed: 101, kind: 'dependency_outage', maxSpans: 40_000 },
  { seed: 102, kind: 'latency_leaf', maxSpans: 40_000 },
  { seed: 103, kind: 'none', maxSpans: 40_000 },
];

describe('diagnosis quality on generated systems', () => {
  it.each(CASES)('$kind (seed $seed)', async (spec) => {
    const { expectation, answer, score } = await withScenarioServer(spec, async (srv, run) => {
      const answer = await diagnose(srv, run.expectation.entry);
      return { expectation: run.expectation, answer, score: scoreCase(run.expectation, answer) };
    });
    expect(answer.error).toBeNull();
    const findings = (answer.findings ?? []).map((f) => `${f.service}/${f.signal} ${f.kind} ${f.severity} ${f.score}`).join('\n');
    if (spec.kind === 'none') {
      expect(score.pass, findings).toBe(true);
      expect(answer.findings!.every((f) => ['low', 'info'].includes(f.severity)), findings).toBe(true);
    } else {
      const top = answer.findings![0];
      expect(top?.service, findings).toBe(expectation.service);
      expect(expectation.signals, findings).toContain(top?.signal);
      expect(['critical', 'high'], findings).toContain(top?.severity);
    }
  }, 120_000);
});
