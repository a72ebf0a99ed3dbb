// The call tree and the call sequences as SQL: the spans they read (keyed by hashes, whole traces
// sampled), the components with their sums per fine bin as lists, the calls each request made in the
// order issued, and their decoders.
import { SPANS } from '../../store/schema.js';
import { between, asLists, listed, num, textOrNull } from './sql.js';
import type { StructureRead } from './sampling.js';
import type { CallSequenceRow, CallTreeRow, Row } from './rows.js';

/** The numeric columns of a call-tree row. */
const CALL_TREE_SUMS = ['bin', 'n', 'k', 'sx', 'sxx', 'slx', 'sllx', 'sl', 'sll', 'sd', 'kt'] as const;

/**
 * Exclusive time at or above this makes a call slow (CallTreeRow.kt): below a TCP retransmission's
 * 200 ms, so calls that waited for one count, and far above the wire time of calls in one network.
 */
export const SLOW_CALL_US = 100_000;

/**
 * The spans the call tree and the call sequences read, over [lo, hi): spans keyed by a 64-bit hash
 * of (trace, span) so the joins are on integers; a `mod` > 1 keeps whole traces, one in that many,
 * by a hash of the trace id (the history's a multiple of the recent part's, so a trace kept before
 * `mid` is kept after it). Read once for both (STATEMENTS.callStructure): the scan and its
 * sample are most of either statement's cost.
 */
export function callSpans(r: StructureRead, hi: number, binUs: number): string {
  const part = (lo: number, to: number, mod: number) =>
    `SELECT hash(trace_id, span_id) AS id, CASE WHEN coalesce(parent_span_id, '') = '' THEN NULL ELSE hash(trace_id, parent_span_id) END AS pid, hash(trace_id) AS tr, service_name AS service, ` +
    `coalesce(k8s_pod_name, service_instance_id, '') AS pod, duration_us AS d, is_error, epoch_us(timestamp) AS t, epoch_us(timestamp) // ${binUs} * ${binUs} AS bin, ` +
    `hash(service_name, span_name) AS nk FROM ${SPANS.name} WHERE ${between(lo, to)}${mod > 1 ? ` AND hash(trace_id) % ${Math.trunc(mod)} = 0` : ''}`;
  // Two range reads, each sampled on its own: the store skips the row groups outside each.
  return r.historyTo > r.lo ? `${part(r.lo, r.historyTo, r.modHistory)} UNION ALL ${part(r.mid, hi, r.modRecent)}` : part(r.mid, hi, r.modRecent);
}

/** The call tree over the spans `s` (callSpans): its common table expressions and its SELECT, one row per group with its bins and sums as lists (asLists). */
export const CALL_TREE = {
  ctes:
    `kids AS (SELECT pid, sum(d) AS cd, min(service) AS cs, max(service) AS cs2, min(pod) AS cpod FROM s WHERE pid IS NOT NULL GROUP BY pid), ` +
    // What a span of a service calls, by its name and its parent's, where such spans' children are always in one other service.
    `known AS (SELECT q.nk AS pnk, p.nk, min(k.cs) AS callee FROM s AS p JOIN kids AS k ON k.pid = p.id JOIN s AS q ON q.id = p.pid ` +
    `WHERE k.cs = k.cs2 AND k.cs <> p.service AND q.service = p.service GROUP BY ALL HAVING min(k.cs) = max(k.cs) AND count(*) >= 3), ` +
    `t AS (SELECT service, CASE WHEN callee IS NULL THEN '' ELSE pod END AS pod, callee, callee_pod, entry, bin, count(*) AS n, count_if(is_error) AS k, sum(x) AS sx, sum(x * x) AS sxx, sum(ln(x + 1)) AS slx, sum(ln(x + 1) ^ 2) AS sllx, ` +
    `sum(ln(d + 1)) AS sl, sum(ln(d + 1) ^ 2) AS sll, sum(d) AS sd, count_if(x >= ${SLOW_CALL_US}) AS kt FROM (` +
    `SELECT p.service, p.pod, p.d, p.is_error, p.bin, (q.id IS NULL OR q.service <> p.service) AS entry, greatest(0, p.d - coalesce(k.cd, 0)) AS x, ` +
    `CASE WHEN k.cs = k.cs2 AND k.cs <> p.service THEN k.cs WHEN k.pid IS NULL AND q.service = p.service THEN n.callee END AS callee, ` +
    `CASE WHEN k.cs = k.cs2 AND k.cs <> p.service THEN k.cpod WHEN k.pid IS NULL AND q.service = p.service AND n.callee IS NOT NULL THEN '' END AS callee_pod ` +
    `FROM s AS p LEFT JOIN kids AS k ON k.pid = p.id LEFT JOIN s AS q ON q.id = p.pid LEFT JOIN known AS n ON n.nk = p.nk AND n.pnk = q.nk) GROUP BY ALL)`,
  select: `SELECT service, pod, callee, callee_pod, entry, ${asLists(CALL_TREE_SUMS)} FROM t GROUP BY ALL`,
};

/**
 * The call sequences over the spans `s` (callSpans); `seq_bin`, not `bin`, so that one statement can
 * return them beside the call tree's rows. A request's calls come as one unordered list and are put
 * in the order issued by the decoder (callSequenceRow): an ordered aggregate costs DuckDB a sort per
 * request, most of this part's time for thousands of requests of a call or two each.
 */
export const callSequencesOf = (binUs: number) => ({
  ctes:
    `j AS (SELECT coalesce(c.pid, c.id) AS req, c.service AS caller, k.service AS callee, k.t AS kt, count(*) OVER (PARTITION BY c.id) = 1 AS own, ` +
    `CASE WHEN own THEN c.t ELSE k.t END AS issued, CASE WHEN own THEN c.t + c.d ELSE k.t + k.d END AS answered FROM s AS k JOIN s AS c ON k.pid = c.id WHERE k.service <> c.service)`,
  select: `SELECT caller, min(kt) // ${binUs} * ${binUs} AS seq_bin, list({callee: callee, issued: issued::DOUBLE, kt: kt::DOUBLE, answered: answered::DOUBLE}) AS calls FROM j GROUP BY req, caller`,
});

export function callTreeRows(r: Row): CallTreeRow[] {
  const [bin = [], n, k, sx, sxx, slx, sllx, sl, sll, sd, kt] = listed(r, CALL_TREE_SUMS);
  const [service, pod, callee, callee_pod, entry] = [String(r['service']), String(r['pod']), textOrNull(r['callee']), textOrNull(r['callee_pod']), Boolean(r['entry'])];
  // Fields written out, not spread from a group object: the spread costs each row of the thousands
  // a call reads many times more (bench:diagnose).
  return bin.map((b, i) => ({
    service,
    pod,
    callee,
    callee_pod,
    entry,
    bin: Number(b),
    n: num(n![i]),
    k: num(k![i]),
    sx: num(sx![i]),
    sxx: num(sxx![i]),
    slx: num(slx![i]),
    sllx: num(sllx![i]),
    sl: num(sl![i]),
    sll: num(sll![i]),
    sd: num(sd![i]),
    kt: num(kt![i]),
  }));
}

interface CallOfRequest {
  callee: unknown;
  issued: unknown;
  kt: unknown;
  answered: unknown;
}

/** A request's calls in the order issued, the callee's start breaking ties (a stable sort keeps the rest as read). */
export function callSequenceRow(r: Row): CallSequenceRow {
  const calls = ((r['calls'] as CallOfRequest[] | null) ?? []).map((c) => ({ callee: String(c.callee), issued: Number(c.issued), kt: Number(c.kt), answered: Number(c.answered) }));
  if (calls.length > 1) calls.sort((a, b) => a.issued - b.issued || a.kt - b.kt);
  return { caller: String(r['caller']), bin: Number(r['seq_bin']), seq: calls.map((c) => c.callee), issued: calls.map((c) => c.issued), answered: calls.map((c) => c.answered) };
}

