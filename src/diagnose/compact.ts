// The compact view of a diagnosis and its byte budget, as pure functions of the full answer: the
// route applies them after diagnose() returns, so the reasoning behind the block never sees them and
// the full block stays the default answer, unchanged.
//
// The budget drops the lowest-ranked entries first, in this order: operations flagged anomalous
// (from the end of each service's list, the service with the most left first: a finding names the
// operations that matter with its own SQL); events (the oldest first, the service with the most left
// first); findings after each service's first (the lowest score first); last, each service's first
// finding (the lowest score first). What was dropped is counted in the service's `omitted`, and
// the answer's `budget` says how many entries went and whether it fits.
import type { DiagnoseResponse, DiagnosisBlock } from './block-schema.js';
import type { AnomalousOperation, CompactBlock, CompactDiagnoseResponse, OmittedParts } from './compact-schema.js';

/** How many entries of each budgeted list a service keeps (findings and operations from the start, events from the end). */
interface Keep {
  findings: number;
  ops: number;
  events: number;
}

const anomalousOperations = (b: DiagnosisBlock): AnomalousOperation[] =>
  b.operation_summaries
    .filter((o) => o.is_anomalous)
    .map((o) => ({
      operation: o.operation,
      anomaly_reason: o.anomaly_reason,
      count: o.count,
      error_pct: o.error_pct,
      baseline_error_pct: o.baseline_error_pct,
      duration_p95_us: o.duration_p95_us,
      baseline_p95_us: o.baseline_p95_us,
      exemplar_error_trace_id: o.exemplar_error_trace_id,
      drill_down_sql: o.drill_down_sql,
    }));

/** `{count}` when `n` entries were left out, nothing otherwise. */
const left = (n: number) => (n > 0 ? { count: n } : undefined);

/** Every part of the block the view leaves out, with the call (and, for spans and logs, the SQL) that fetches it. */
function omitted(b: DiagnosisBlock, kept: Keep, anomalous: number): OmittedParts {
  const parts: OmittedParts = {
    full_call: { detail: 'full', services: [b.service], from_ts: b.window.from_ts, to_ts: b.window.to_ts },
    findings: left(Math.max(b.findings_total, b.findings.length) - kept.findings),
    anomalous_operations: left(anomalous - kept.ops),
    events: left(b.events.length - kept.events),
    operations: left(Math.max(b.operations_total, b.operation_summaries.length) - anomalous),
    spans: b.spans.total > 0 ? { count: b.spans.total, sql: b.spans.drill_all_sql } : undefined,
    logs: b.logs.total > 0 ? { count: b.logs.total, sql: b.logs.drill_all_sql } : undefined,
    log_patterns: left(Math.max(b.log_patterns_total, b.log_patterns.length)),
    log_counters: left(b.log_counters.length),
    metrics: left(Math.max(b.metrics_total, b.metrics.length)),
    profiles: left(Math.max(b.profiles_total, b.profiles.length)),
    gen_ai: left(b.gen_ai.length),
    dependencies: left(b.context.dependencies.length),
    dependents: left(b.context.dependents.length),
  };
  // Parts with nothing left out are not listed: absent keys cost no bytes.
  for (const k of Object.keys(parts) as (keyof OmittedParts)[]) if (parts[k] === undefined) delete parts[k];
  return parts;
}

function view(b: DiagnosisBlock, ops: AnomalousOperation[], kept: Keep): CompactBlock {
  return {
    service: b.service,
    window: b.window,
    findings: b.findings.slice(0, kept.findings),
    anomalous_operations: ops.slice(0, kept.ops),
    coverage: b.coverage,
    events: b.events.slice(b.events.length - kept.events),
    omitted: omitted(b, kept, ops.length),
  };
}

/** The compact view of one service's block: every finding, every operation flagged anomalous, every event. */
export function compactBlock(block: DiagnosisBlock): CompactBlock {
  const ops = anomalousOperations(block);
  return view(block, ops, { findings: block.findings.length, ops: ops.length, events: block.events.length });
}

/** UTF-8 bytes of a value's JSON, as the answer is sent. */
export const jsonBytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v));

/** `answer` with `budget.bytes` set to the size of the whole answer, that field's own digits included. */
function sized(answer: CompactDiagnoseResponse): CompactDiagnoseResponse {
  for (;;) {
    const n = jsonBytes(answer);
    if (n === answer.budget.bytes) return answer;
    answer.budget.bytes = n;
  }
}

interface Service {
  name: string;
  block: DiagnosisBlock;
  ops: AnomalousOperation[];
  keep: Keep;
}

/** The next entry the budget drops, lowest-ranked first (the order in the header), or null when nothing is left to drop. */
function nextDrop(services: readonly Service[]): { s: Service; list: keyof Keep; bytes: number } | null {
  const most = (list: 'ops' | 'events') => services.reduce<Service | null>((m, s) => (s.keep[list] > 0 && (!m || s.keep[list] >= m.keep[list]) ? s : m), null);
  const op = most('ops');
  if (op) return { s: op, list: 'ops', bytes: jsonBytes(op.ops[op.keep.ops - 1]) + 1 };
  const ev = most('events');
  if (ev) return { s: ev, list: 'events', bytes: jsonBytes(ev.block.events[ev.block.events.length - ev.keep.events]) + 1 };
  for (const floor of [1, 0]) {
    let low: Service | null = null;
    for (const s of services) {
      if (s.keep.findings <= floor) continue;
      const score = s.block.findings[s.keep.findings - 1]!.score;
      if (!low || score <= low.block.findings[low.keep.findings - 1]!.score) low = s;
    }
    if (low) return { s: low, list: 'findings', bytes: jsonBytes(low.block.findings[low.keep.findings - 1]) + 1 };
  }
  return null;
}

/**
 * The compact view of a diagnose answer, within `maxBytes` of JSON when it is set: the lowest-ranked
 * entries dropped first until it fits, or until nothing is left to drop (`budget.fits` false).
 */
export function compactResponse(full: DiagnoseResponse, maxBytes: number | null): CompactDiagnoseResponse {
  const services: Service[] = Object.entries(full.results).map(([name, block]) => {
    const ops = anomalousOperations(block);
    return { name, block, ops, keep: { findings: block.findings.length, ops: ops.length, events: block.events.length } };
  });
  const total = (s: Service) => s.block.findings.length + s.ops.length + s.block.events.length;
  const assemble = (): CompactDiagnoseResponse => {
    const results: CompactDiagnoseResponse['results'] = {};
    let dropped = 0;
    for (const s of services) {
      results[s.name] = view(s.block, s.ops, s.keep);
      dropped += total(s) - s.keep.findings - s.keep.ops - s.keep.events;
    }
    return sized({ detail: 'findings', results, errors: full.errors, budget: { max_bytes: maxBytes, bytes: 0, dropped, fits: true } });
  };
  let answer = assemble();
  if (maxBytes === null) return answer;
  while (answer.budget.bytes > maxBytes) {
    // Drop entries worth the excess by their own sizes, then measure the answer again: the counts
    // `omitted` gains cost a few bytes more, so another round may follow.
    let excess = answer.budget.bytes - maxBytes;
    let any = false;
    for (let d = nextDrop(services); d && excess > 0; d = nextDrop(services)) {
      d.s.keep[d.list]--;
      excess -= d.bytes;
      any = true;
    }
    if (!any) {
      answer.budget.fits = false;
      return sized(answer);
    }
    answer = assemble();
  }
  return answer;
}
