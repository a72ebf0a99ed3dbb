// What every kind of evidence produces: candidates, each naming a service, with a surprise on one
// scale — -log10 of how probable the change would be if nothing had happened, judged against the
// statistic's own variation in clean history (bin to bin, minute to minute), not only its sampling
// noise — and everything its finding needs (kind, signal, before → after, summary, the lead's SQL).
// rank.ts puts them in one order.
import type { FindingKind } from '../findings.js';

/** The kinds of evidence, one module each (evidence/index.ts lists them). */
export const EVIDENCE_KINDS = [
  'latency', // a service's own work per call (or its operations' p95) rose
  'wire', // callers wait longer on calls into it, beyond its own spans
  'errors', // its own requests fail more (span status), beyond what it inherits
  'log_levels', // its error (or warning) records per request rose
  'log_events', // a log event of its appeared or vanished, per request
  'paths', // what callers do with it changed: retries, silence, calls after its answers, paths taken
  'gauges', // a pod's CPU or memory rose, or it restarted
  'changes', // a deploy or restart at the onset, a new error type
  'profiles', // a function's profiled cost rose
  'gen_ai', // a model's calls fail or finish abnormally
] as const;
export type EvidenceKind = (typeof EVIDENCE_KINDS)[number];

export interface Candidate {
  /** The service blamed (an external peer is blamed on the service calling it). */
  service: string;
  evidence: EvidenceKind;
  /** What exactly it rests on, within its kind (own_latency, wire_latency, calls_rise, event_vanished, …): for tests and tools, not the block. */
  what: string;
  /** The other end, where there is one: the caller or callee of an edge, the gauge and pod. */
  peer?: string;
  kind: FindingKind;
  signal: string;
  operation: string | null;
  before: number | null;
  after: number | null;
  /** -log10 p against clean history's own variation: the one scale every candidate is ranked on. */
  surprise: number;
  /** When the change began (µs). */
  onset: number;
  summary: string;
  drill_down_sql: string;
  /** Context, never ranked as a cause: a change the service inherits from services it calls. */
  context?: boolean;
  /** Corroboration (changes) of these kinds only: a new error type speaks for a service's own errors, not for whatever else it shows. */
  corroborates?: readonly EvidenceKind[];
  /** What of the same service this explains (its `what`s): it goes before them, whatever their surprise (a hot spot before the latency it causes). */
  explains?: readonly string[];
}

/**
 * Below this surprise a change is not evidence (p > 0.001 after the module's own correction for the
 * number of statistics it tested): the usual line, the same for every kind.
 */
export const SIGNIFICANT = 3;

export const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
export const ms = (us: number) => (us >= 10_000 ? `${Math.round(us / 1000)} ms` : `${round(us / 1000, 1)} ms`);
/** The value of `key`, made and stored first when absent. */
export const getOrMake = <K, V>(m: Map<K, V>, key: K, make: () => V): V => m.get(key) ?? m.set(key, make()).get(key)!;
