// The one ranking (rank.ts) on hand-made candidates: Fisher's combination over kinds, the cap,
// corroboration only beside significant evidence of the kind it speaks for, what explains first.
import { describe, expect, it } from 'vitest';
import { markEchoes, rankServices, scoreOf } from '../../src/diagnose/rank.js';
import type { Candidate, EvidenceKind } from '../../src/diagnose/evidence/candidate.js';

const c = (service: string, evidence: EvidenceKind, surprise: number, extra: Partial<Candidate> = {}): Candidate => ({
  service,
  evidence,
  what: evidence,
  kind: 'dependency_failure',
  signal: 'latency_p95',
  operation: null,
  before: 1,
  after: 2,
  surprise,
  onset: 0,
  summary: `${service} ${evidence} ${surprise}`,
  drill_down_sql: 'SELECT 1',
  ...extra,
});
const everyone = new Set(['a', 'b', 'c']);

describe('rankServices', () => {
  it('combines kinds: two agreeing kinds outrank one kind as sure as either, two statistics of one kind do not', () => {
    const r = rankServices([c('a', 'latency', 10), c('a', 'gauges', 10), c('b', 'latency', 12), c('c', 'latency', 10), c('c', 'latency', 10, { what: 'op_latency' })], everyone);
    expect(r.map((x) => x.service)).toEqual(['a', 'b', 'c']);
    expect(r[2]!.surprise).toBe(10);
  });

  it('caps a kind, and breaks ties at the cap by the strongest surprise', () => {
    const r = rankServices([c('a', 'wire', 300), c('b', 'paths', 60)], everyone);
    expect(r.map((x) => [x.service, x.surprise])).toEqual([
      ['a', 30],
      ['b', 30],
    ]);
  });

  it('counts a change only beside significant evidence of the kind it speaks for; alone, nothing', () => {
    const deploy = c('a', 'changes', 1.5, { what: 'deploy', kind: 'deploy_regression' });
    const newType = (s: string) => c(s, 'changes', 30, { what: 'new_error_type', corroborates: ['errors'] });
    expect(rankServices([deploy], everyone)).toEqual([]);
    const [withDeploy] = rankServices([c('a', 'errors', 8), deploy], everyone);
    expect(withDeploy!.surprise).toBeGreaterThan(8);
    expect(withDeploy!.candidates.map((x) => x.what)).toEqual(['errors', 'deploy']);
    // A new error type beside a warning bump says nothing about the warnings.
    const [warned] = rankServices([c('b', 'log_levels', 5), newType('b')], everyone);
    expect(warned!.surprise).toBe(5);
    const [failing] = rankServices([c('b', 'errors', 5), newType('b')], everyone);
    expect(failing!.surprise).toBeGreaterThan(20);
  });

  it('leaves out context, services outside the scope, and what is below the line', () => {
    expect(rankServices([c('a', 'errors', 50, { context: true }), c('x', 'errors', 50), c('b', 'gauges', 2.9)], everyone)).toEqual([]);
  });

  it('puts what explains another of the same service before it, whatever their surprise', () => {
    const [r] = rankServices([c('a', 'latency', 30, { what: 'own_latency' }), c('a', 'profiles', 5, { what: 'hot_spot', explains: ['own_latency'] })], everyone);
    expect(r!.candidates.map((x) => x.what)).toEqual(['hot_spot', 'own_latency']);
  });

  it('puts the callee first of a caller and callee equally sure (both at the cap), whatever their raw surprise', () => {
    const cs = [c('a', 'latency', 300), c('b', 'latency', 40)];
    expect(rankServices(cs, everyone).map((r) => r.service)).toEqual(['a', 'b']);
    expect(rankServices(cs, everyone, new Map([['a', new Set(['c'])], ['c', new Set(['b'])]])).map((r) => r.service)).toEqual(['b', 'a']);
    // Not when the caller is surer.
    expect(rankServices([...cs, c('a', 'errors', 30)], everyone, new Map([['a', new Set(['b'])]]))[0]!.service).toBe('a');
  });

  it('scores half at a combined surprise of 8, rising towards 1', () => {
    expect(scoreOf(8)).toBe(0.5);
    expect(scoreOf(3)).toBeLessThan(0.45);
    expect(scoreOf(60)).toBeGreaterThan(0.85);
  });
});

describe('markEchoes', () => {
  const calls = new Map([['a', new Set(['b'])]]);
  const lead = (cs: Candidate[]) => rankServices(markEchoes(cs, calls), everyone)[0]?.service;

  it("leaves a caller's new error events and records to the callee with trouble of its own", () => {
    const logs = [c('a', 'log_events', 25, { what: 'event_appeared' }), c('a', 'log_levels', 20, { what: 'error_logs' })];
    expect(lead([...logs, c('b', 'paths', 12)])).toBe('b');
    const marked = markEchoes([...logs, c('b', 'paths', 12)], calls).filter((x) => x.service === 'a');
    expect(marked.every((x) => x.context && /an echo of b/.test(x.summary))).toBe(true);
  });

  it("keeps them the caller's when its callees are quiet, or the callee only calls it", () => {
    const logs = [c('a', 'log_events', 25, { what: 'event_appeared' })];
    expect(lead([...logs, c('b', 'paths', 2)])).toBe('a');
    expect(lead([...logs.map((x) => ({ ...x, service: 'b' })), c('a', 'latency', 12)])).toBe('b');
  });

  it('keeps a vanished event and the caller\'s own latency its own', () => {
    expect(lead([c('a', 'log_events', 25, { what: 'event_vanished' }), c('b', 'paths', 12)])).toBe('a');
    expect(lead([c('a', 'latency', 25), c('a', 'log_levels', 20, { what: 'error_logs' }), c('b', 'paths', 12)])).toBe('a');
  });
});
