// Trace detail (GET /v1/traces/{trace_id}): a pure function from the stored spans of one trace to the
// spec's "Trace detail" resource. Everything here is iterative (explicit stacks/queues), so a trace
// that is one 10,000-span deep chain cannot overflow the call stack.
//
// Rules (where the spec is silent):
// - Duplicate span ids (an exporter retry stored twice) are kept once: the first row wins.
// - Root: among spans with no parent (null, empty or all-zero parent_span_id) the longest, then the
//   earliest-starting, then the smallest span id. When no span lacks a parent (partial trace), the
//   earliest-starting span whose parent is absent from the trace (ties: longest, smallest id). If
//   every parent is present (a cycle in bad data), the earliest-starting span.
// - critical_path: starting from the root, each span's interval is clamped to its parent's
//   (clamped) interval to absorb clock skew; a child wholly outside its parent contributes no time
//   and is never on the path. Walking back from the span's end, the child that finishes last at or
//   before the cursor is taken, its subtree is resolved the same way, and the cursor moves to that
//   child's start; children that overlap an already chosen later child are concurrent and skipped.
//   The ids are listed in pre-order (a span before its critical descendants), siblings in
//   chronological order, so the root is first. Spans outside the root's subtree (other roots,
//   orphans) are not on the path but do count in total_duration_us.
// - services: distinct service names ordered by the earliest start of any of their spans.
// - service_breakdown: raw (unclamped) inclusive durations summed per service, largest first;
//   percentages are rounded to hundredths with the largest-remainder method so they sum to exactly
//   100 (by span count when every span has zero duration).
// - spans: every span, ordered by start (ties keep input order).

export interface SpanDetail {
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  service_name: string;
  span_name: string;
  span_kind: number | null;
  status_code: number;
  timestamp: string;
  duration_us: number;
  trace_state: string | null;
  scope_name: string | null;
  scope_version: string | null;
  resource_attributes: string | null;
  span_attributes: string | null;
  events_json: string | null;
  links_json: string | null;
}

/** One stored span as the store reads it back: the span-detail fields plus its start in microseconds. */
export interface SpanRow extends Omit<SpanDetail, 'duration_us' | 'parent_span_id' | 'span_kind'> {
  parent_span_id?: string | null;
  span_kind?: number | null;
  /** BIGINT columns may arrive as bigint from DuckDB; either is accepted. */
  duration_us: number | bigint;
  /** Start of the span, integer microseconds since the Unix epoch. */
  start_us: number | bigint;
}

export interface ServiceBreakdownEntry {
  service: string;
  duration_us: number;
  percentage: number;
}

export interface TraceDetail {
  trace_id: string;
  spans: SpanDetail[];
  root_span: SpanDetail;
  span_count: number;
  error_count: number;
  services: string[];
  critical_path: string[];
  total_duration_us: number;
  service_breakdown: ServiceBreakdownEntry[];
}

interface Node {
  readonly detail: SpanDetail;
  readonly order: number; // input position, for stable ties
  readonly start: number;
  readonly end: number;
  readonly duration: number;
  readonly parent: string | null;
  children: number[];
}

const ERROR_STATUS = 2;

function hasNoParent(p: string | null | undefined): boolean {
  return p == null || p === '' || /^0+$/.test(p);
}

function toDetail(r: SpanRow): SpanDetail {
  return {
    trace_id: r.trace_id,
    span_id: r.span_id,
    parent_span_id: hasNoParent(r.parent_span_id) ? null : (r.parent_span_id as string),
    service_name: r.service_name,
    span_name: r.span_name,
    span_kind: r.span_kind ?? null,
    status_code: r.status_code,
    timestamp: r.timestamp,
    duration_us: Number(r.duration_us),
    trace_state: r.trace_state ?? null,
    scope_name: r.scope_name ?? null,
    scope_version: r.scope_version ?? null,
    resource_attributes: r.resource_attributes ?? null,
    span_attributes: r.span_attributes ?? null,
    events_json: r.events_json ?? null,
    links_json: r.links_json ?? null,
  };
}

/** Negative durations (bad clocks within one span) are treated as zero-length spans. */
function makeNodes(rows: readonly SpanRow[]): Node[] {
  const seen = new Set<string>();
  const nodes: Node[] = [];
  for (const r of rows) {
    if (seen.has(r.span_id)) continue;
    seen.add(r.span_id);
    const detail = toDetail(r);
    const start = Number(r.start_us);
    const duration = Math.max(0, detail.duration_us);
    nodes.push({ detail, order: nodes.length, start, end: start + duration, duration, parent: detail.parent_span_id, children: [] });
  }
  nodes.sort((a, b) => a.start - b.start || a.order - b.order);
  return nodes;
}

function chooseRoot(nodes: readonly Node[], index: ReadonlyMap<string, number>): number {
  let best = -1;
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i]!;
    if (n.parent !== null) continue;
    if (best < 0) { best = i; continue; }
    const b = nodes[best]!;
    if (n.duration > b.duration || (n.duration === b.duration && (n.start < b.start || (n.start === b.start && n.detail.span_id < b.detail.span_id)))) best = i;
  }
  if (best >= 0) return best;
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i]!;
    if (n.parent !== null && index.has(n.parent) && n.parent !== n.detail.span_id) continue;
    if (best < 0) { best = i; continue; }
    const b = nodes[best]!;
    if (n.start < b.start || (n.start === b.start && (n.duration > b.duration || (n.duration === b.duration && n.detail.span_id < b.detail.span_id)))) best = i;
  }
  // Every parent present: a cycle. Nodes are sorted by start, so 0 is the earliest.
  return best >= 0 ? best : 0;
}

/**
 * The critical path from `root`: see the rules at the top of this file. Iterative; a span is
 * visited at most once even if bad data links spans in a cycle.
 */
function criticalPath(nodes: readonly Node[], root: number): string[] {
  const chosen = new Map<number, number[]>();
  const visited = new Uint8Array(nodes.length);
  const work: Array<[number, number, number]> = [[root, nodes[root]!.start, nodes[root]!.end]];
  visited[root] = 1;
  while (work.length > 0) {
    const [i, lo, hi] = work.pop()!;
    const kids: Array<{ k: number; s: number; e: number }> = [];
    for (const k of nodes[i]!.children) {
      if (visited[k]) continue;
      const c = nodes[k]!;
      const s = Math.max(c.start, lo);
      const e = Math.min(c.end, hi);
      // Wholly outside the parent (skew) or zero-length: contributes no time to the parent.
      if (e <= s) continue;
      kids.push({ k, s, e });
    }
    // Latest end first; on a tie the longer child (earlier start) accounts for more of the time.
    kids.sort((a, b) => b.e - a.e || a.s - b.s || (nodes[a.k]!.detail.span_id < nodes[b.k]!.detail.span_id ? -1 : 1));
    let cursor = hi;
    const picked: number[] = [];
    for (const c of kids) {
      if (c.e > cursor) continue; // concurrent with a later child already on the path
      picked.push(c.k);
      visited[c.k] = 1;
      work.push([c.k, c.s, c.e]);
      cursor = c.s;
    }
    picked.reverse(); // chronological
    chosen.set(i, picked);
  }
  // Pre-order over the chosen tree.
  const out: string[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const i = stack.pop()!;
    out.push(nodes[i]!.detail.span_id);
    const picked = chosen.get(i);
    if (picked) for (let j = picked.length - 1; j >= 0; j--) stack.push(picked[j]!);
  }
  return out;
}

/** Shares of `values` in percent, rounded to hundredths, summing to exactly 100 (largest remainder). */
function percentages(values: readonly number[]): number[] {
  const total = values.reduce((a, b) => a + b, 0);
  if (total <= 0) return values.map(() => 0);
  const exact = values.map((v) => (v / total) * 10_000);
  const floors = exact.map(Math.floor);
  let left = 10_000 - floors.reduce((a, b) => a + b, 0);
  const byRemainder = exact.map((x, i) => ({ i, r: x - floors[i]! })).sort((a, b) => b.r - a.r || a.i - b.i);
  for (let j = 0; left > 0 && j < byRemainder.length; j++, left--) floors[byRemainder[j]!.i]! += 1;
  return floors.map((bp) => bp / 100);
}

/**
 * Builds the spec's trace detail from every stored span of one trace (any order).
 * Throws a RangeError when `spans` is empty (the API answers 404 before calling this).
 */
export function buildTraceDetail(spans: readonly SpanRow[]): TraceDetail {
  if (spans.length === 0) throw new RangeError('buildTraceDetail: a trace needs at least one span');
  const nodes = makeNodes(spans);
  const index = new Map<string, number>();
  nodes.forEach((n, i) => index.set(n.detail.span_id, i));
  for (let i = 0; i < nodes.length; i++) {
    const p = nodes[i]!.parent;
    if (p === null || p === nodes[i]!.detail.span_id) continue;
    const pi = index.get(p);
    if (pi !== undefined) nodes[pi]!.children.push(i);
  }
  const root = chooseRoot(nodes, index);

  let minStart = Infinity;
  let maxEnd = -Infinity;
  let errors = 0;
  const services: string[] = [];
  const perService = new Map<string, { dur: number; spans: number }>();
  for (const n of nodes) {
    if (n.start < minStart) minStart = n.start;
    if (n.end > maxEnd) maxEnd = n.end;
    if (n.detail.status_code === ERROR_STATUS) errors++;
    const svc = n.detail.service_name;
    let acc = perService.get(svc);
    if (!acc) {
      acc = { dur: 0, spans: 0 };
      perService.set(svc, acc);
      services.push(svc); // nodes are in start order, so this is order of first start
    }
    acc.dur += n.duration;
    acc.spans++;
  }
  const durs = services.map((s) => perService.get(s)!.dur);
  const anyTime = durs.some((d) => d > 0);
  const pct = percentages(anyTime ? durs : services.map((s) => perService.get(s)!.spans));
  const breakdown = services
    .map((service, i) => ({ service, duration_us: durs[i]!, percentage: pct[i]!, i }))
    .sort((a, b) => b.duration_us - a.duration_us || a.i - b.i)
    .map(({ service, duration_us, percentage }) => ({ service, duration_us, percentage }));

  const detail = nodes.map((n) => n.detail);
  return {
    trace_id: nodes[root]!.detail.trace_id,
    spans: detail,
    root_span: nodes[root]!.detail,
    span_count: nodes.length,
    error_count: errors,
    services,
    critical_path: criticalPath(nodes, root),
    total_duration_us: maxEnd - minStart,
    service_breakdown: breakdown,
  };
}
