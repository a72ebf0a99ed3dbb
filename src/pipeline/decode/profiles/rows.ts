// DecodedPprof → svc_profiles rows, shared by every decoder and every ingest path (raw pprof,
// Pyroscope push, OTLP profiles), plus the pure hot-spot aggregation the diagnosis uses.
//
// Rules (stated once, here):
// - One row per (sample type, distinct stack + labels). Samples whose root→leaf function-name stacks
//   and labels are equal are summed, even when they came from different locations/addresses.
// - stack = root → leaf function names; a location's inlined lines expand in place (pprof lists a
//   location's lines innermost first), so `function` = the leaf location's FIRST line's function:
//   the innermost inlined frame, which is where the time was spent.
// - Frames with no function name: "<mapping file basename>+0x<address>" or "0x<address>", else "unknown".
// - value = the summed self value of the leaf for that stack; rows whose sum is 0 are omitted.
// - sample_count = the summed `samples`/`count` value of the same samples when the profile has that
//   sample type (Go CPU, Node wall, OTLP eBPF), else the number of pprof samples summed.
// - Count → time: a `samples|cpu`/`count` type in a profile with no time-valued type becomes
//   `cpu`/`nanoseconds` with value = count × 1e9 / sampleRate when a Pyroscope sampleRate is given,
//   or (countToTime, used for OTLP like Pyroscope does) count × period when period_type's unit is
//   nanoseconds. The count itself stays in sample_count.
// - Labels: `span_id` and `trace_id` string labels go to their columns; `profile_id` (Pyroscope's
//   span-profile label) goes to span_id when there is no span_id label. Everything else is `labels`,
//   a JSON object with sorted keys (numeric labels as numbers; the last value wins on a repeated key).
// - timestamp (µs) = options.timestampUs, else the profile's time_nanos, else now.
// - drop_frames / keep_frames are not applied.
import { StringReader, sampleCount, type DecodedPprof } from './decoded.js';

export type ProfileSource = 'pprof' | 'pyroscope' | 'otlp';

/** One svc_profiles row; keys are the column names of PROFILES in src/store/schema.ts. */
export interface ProfileRow {
  /** Microseconds since the Unix epoch (the TIMESTAMP column). */
  timestamp: number;
  service_name: string;
  profile_id: string | null;
  profile_type: string;
  unit: string;
  period_type: string | null;
  period: number | null;
  duration_ns: number | null;
  function: string;
  stack: string[];
  value: number;
  sample_count: number;
  labels: string | null;
  trace_id: string | null;
  span_id: string | null;
  attributes: string | null;
  source: ProfileSource;
}

export interface RowOptions {
  service: string;
  /** Row timestamp in µs; default: the profile's time_nanos, else now. */
  timestampUs?: number;
  /** Default: the profile's duration_nanos (null when 0). */
  durationNs?: number;
  /** Series-level labels (Pyroscope name braces, push series labels, OTLP resource attributes). */
  attributes?: Record<string, string | number | boolean>;
  /** Pyroscope `sampleRate` (Hz): scales `samples`/`count` to cpu nanoseconds. */
  sampleRate?: number;
  /** Scale `samples`/`count` by the period when period_type is in nanoseconds (OTLP). */
  countToTime?: boolean;
  source?: ProfileSource;
  profileId?: string | null;
  /** For tests: the clock used when neither timestampUs nor time_nanos is set. */
  nowUs?: () => number;
}

const TIME_UNITS = new Set(['nanoseconds', 'microseconds', 'milliseconds', 'seconds']);

interface TypeSpec {
  index: number;
  type: string;
  unit: string;
  /** Multiplier applied to the summed value (count → nanoseconds), or 1. */
  scale: number;
}

interface Group {
  stack: string[];
  labels: string | null;
  traceId: string | null;
  spanId: string | null;
  records: number;
}

interface LabelInfo {
  json: string | null;
  traceId: string | null;
  spanId: string | null;
  key: string;
}

/** The sample types of a profile as rows will name them (missing names filled in). */
export function sampleTypeNames(d: DecodedPprof, s = new StringReader(d)): { type: string; unit: string }[] {
  const k = d.valuesPerSample;
  const nTypes = d.sampleTypes.length >> 1;
  const out: { type: string; unit: string }[] = [];
  for (let j = 0; j < k; j++) {
    if (j < nTypes) {
      out.push({ type: s.get(d.sampleTypes[2 * j]!) || 'unknown', unit: s.get(d.sampleTypes[2 * j + 1]!) || 'count' });
    } else if (nTypes === 0 && j === 0 && k === 1 && s.get(d.periodType)) {
      out.push({ type: s.get(d.periodType), unit: s.get(d.periodUnit) || 'count' });
    } else if (nTypes === 0 && j === 0) {
      out.push({ type: 'samples', unit: 'count' });
    } else {
      out.push({ type: `value${j}`, unit: 'count' });
    }
  }
  return out;
}

// One function: the rules above applied in one pass over the samples, with the stack cache local.
export function pprofToRows(d: DecodedPprof, opts: RowOptions): ProfileRow[] {
  const s = new StringReader(d);
  const n = sampleCount(d);
  const k = d.valuesPerSample;
  if (n === 0 || k === 0) return [];

  // ---- sample types, count column, count → time ----
  const names = sampleTypeNames(d, s);
  const hasTime = names.some((t) => TIME_UNITS.has(t.unit));
  const countIdx = names.findIndex((t) => t.type === 'samples' && t.unit === 'count');
  const periodUnit = s.get(d.periodUnit);
  const periodTypeName = s.get(d.periodType);
  const period = Number(d.period);
  const specs: TypeSpec[] = names.map((t, index) => {
    if (!hasTime && t.unit === 'count' && (t.type === 'samples' || t.type === 'cpu')) {
      if (opts.sampleRate !== undefined && opts.sampleRate > 0) {
        return { index, type: 'cpu', unit: 'nanoseconds', scale: 1e9 / opts.sampleRate };
      }
      if (opts.countToTime && periodUnit === 'nanoseconds' && period > 0) {
        return { index, type: periodTypeName && periodTypeName !== 'samples' ? periodTypeName : 'cpu', unit: 'nanoseconds', scale: period };
      }
    }
    return { index, type: t.type, unit: t.unit, scale: 1 };
  });

  // ---- frames per location (leaf first; inlined lines innermost first) ----
  const locFrames: (string[] | undefined)[] = new Array(d.locId.length);
  const frameName = (fi: number): string => {
    if (fi < 0) return '';
    return s.get(d.fnName[fi]!) || s.get(d.fnSystemName[fi]!);
  };
  const addressName = (li: number): string => {
    const addr = d.locAddr[li] ?? 0n;
    if (addr === 0n) return 'unknown';
    const mi = d.locMapping[li]!;
    const file = mi >= 0 ? s.get(d.mapFilename[mi]!) : '';
    const hex = '0x' + addr.toString(16);
    return file ? `${file.slice(file.lastIndexOf('/') + 1)}+${hex}` : hex;
  };
  const framesOf = (li: number): string[] => {
    let f = locFrames[li];
    if (f) return f;
    f = [];
    const a = d.locLineStart[li]!;
    const b = d.locLineStart[li + 1]!;
    for (let i = a; i < b; i++) {
      const name = frameName(d.lineFunc[i]!);
      f.push(name || addressName(li));
    }
    if (f.length === 0) f.push(addressName(li));
    locFrames[li] = f;
    return f;
  };

  // ---- labels per sample, interned ----
  const labelCache = new Map<string, LabelInfo>();
  const noLabels: LabelInfo = { json: null, traceId: null, spanId: null, key: '' };
  const labelsOf = (si: number): LabelInfo => {
    const a = d.sampleLabStart[si]!;
    const b = d.sampleLabStart[si + 1]!;
    if (a === b) return noLabels;
    let key = '';
    for (let i = a; i < b; i++) key += `${d.labKey[i]},${d.labStr[i]},${d.labNum[i]};`;
    let info = labelCache.get(key);
    if (info) return info;
    const obj: Record<string, string | number> = {};
    let traceId: string | null = null;
    let spanId: string | null = null;
    let profileId: string | null = null;
    for (let i = a; i < b; i++) {
      const name = s.get(d.labKey[i]!);
      const str = d.labStr[i]!;
      if (str !== 0) {
        const v = s.get(str);
        if (name === 'trace_id') traceId = v;
        else if (name === 'span_id') spanId = v;
        else if (name === 'profile_id') profileId = v;
        else obj[name] = v;
      } else {
        obj[name] = d.labNum[i]!;
      }
    }
    if (profileId !== null) {
      if (spanId === null) spanId = profileId;
      else obj['profile_id'] = profileId;
    }
    const keys = Object.keys(obj).sort();
    const json = keys.length ? JSON.stringify(Object.fromEntries(keys.map((kk) => [kk, obj[kk]]))) : null;
    info = { json, traceId, spanId, key: `${json ?? ''}\u0001${traceId ?? ''}\u0001${spanId ?? ''}` };
    labelCache.set(key, info);
    return info;
  };

  // ---- group samples by (stack names, labels) ----
  // No string keys on the per-sample path (building a string key per sample costs more than the WASM
  // decode itself). A sample's location sequence is interned by hash to a stack id;
  // each new sequence maps, by its sequence of interned frame-name ids, to a name-level stack id.
  const nameIds = new Map<string, number>();
  const locFrameIds: (number[] | undefined)[] = new Array(d.locId.length);
  const frameIdsOf = (li: number): number[] => {
    let ids = locFrameIds[li];
    if (ids) return ids;
    ids = framesOf(li).map((name) => {
      let id = nameIds.get(name);
      if (id === undefined) nameIds.set(name, (id = nameIds.size));
      return id;
    });
    locFrameIds[li] = ids;
    return ids;
  };
  const byLocs = new SeqInterner();
  const locToStack: number[] = [];
  const byNames = new SeqInterner();
  const stacks: string[][] = [];
  const nameSeq: number[] = [];
  const labelIds = new Map<string, number>();
  const groupIndex = new Map<number | string, number>();
  const unlabelled: number[] = [];
  const sums: number[] = [];
  const groups: Group[] = [];
  const vals = d.values;
  for (let si = 0; si < n; si++) {
    const a = d.sampleLocStart[si]!;
    const b = d.sampleLocStart[si + 1]!;
    const seq = byLocs.intern(d.sampleLoc, a, b);
    let stackId = locToStack[seq];
    if (stackId === undefined) {
      nameSeq.length = 0;
      for (let i = b - 1; i >= a; i--) {
        const ids = frameIdsOf(d.sampleLoc[i]!);
        for (let j = ids.length - 1; j >= 0; j--) nameSeq.push(ids[j]!);
      }
      stackId = byNames.intern(nameSeq, 0, nameSeq.length);
      if (stackId === stacks.length) {
        const len = nameSeq.length;
        const stackNames: string[] = new Array<string>(len || 1);
        let o = 0;
        for (let i = b - 1; i >= a; i--) {
          const f = framesOf(d.sampleLoc[i]!);
          for (let j = f.length - 1; j >= 0; j--) stackNames[o++] = f[j]!;
        }
        if (len === 0) stackNames[0] = 'unknown';
        stacks.push(stackNames);
      }
      locToStack[seq] = stackId;
    }
    const lab = labelsOf(si);
    let labId = lab === noLabels ? 0 : labelIds.get(lab.key);
    if (labId === undefined) labelIds.set(lab.key, (labId = labelIds.size + 1));
    // unlabelled samples (the common case) index groups by stack id; labelled ones by a numeric key
    // while it is exact (label sets < 2^21), else a string
    let gi: number | undefined;
    if (labId === 0) gi = unlabelled[stackId];
    else {
      const gk: number | string = labId < 2097152 ? stackId * 2097152 + labId : `${stackId}:${labId}`;
      gi = groupIndex.get(gk);
      if (gi === undefined) groupIndex.set(gk, (gi = groups.length));
    }
    if (gi === undefined || gi === groups.length) {
      gi = groups.length;
      if (labId === 0) unlabelled[stackId] = gi;
      groups.push({ stack: stacks[stackId]!, labels: lab.json, traceId: lab.traceId, spanId: lab.spanId, records: 0 });
      for (let j = 0; j < k; j++) sums.push(0);
    }
    groups[gi]!.records++;
    const base = si * k;
    const gb = gi * k;
    for (let j = 0; j < k; j++) sums[gb + j]! += vals[base + j]!;
  }

  // ---- rows ----
  const nowUs = opts.nowUs ?? (() => Date.now() * 1000);
  const timestamp =
    opts.timestampUs !== undefined ? Math.trunc(opts.timestampUs) : d.timeNanos > 0n ? Number(d.timeNanos / 1000n) : nowUs();
  const durationNs = opts.durationNs !== undefined ? opts.durationNs : d.durationNanos > 0n ? Number(d.durationNanos) : null;
  const periodType = periodTypeName || periodUnit ? `${periodTypeName}:${periodUnit}` : null;
  const attrs = opts.attributes && Object.keys(opts.attributes).length ? JSON.stringify(sortKeys(opts.attributes)) : null;
  const source = opts.source ?? 'pprof';
  const profileId = opts.profileId ?? null;
  const rows: ProfileRow[] = [];
  for (const spec of specs) {
    for (let gi = 0; gi < groups.length; gi++) {
      const g = groups[gi]!;
      const raw = sums[gi * k + spec.index]!;
      if (raw === 0) continue;
      rows.push({
        timestamp,
        service_name: opts.service,
        profile_id: profileId,
        profile_type: spec.type,
        unit: spec.unit,
        period_type: periodType,
        period: d.period !== 0n ? period : null,
        duration_ns: durationNs,
        function: g.stack[g.stack.length - 1]!,
        stack: g.stack,
        value: spec.scale === 1 ? raw : Math.round(raw * spec.scale),
        sample_count: countIdx >= 0 ? sums[gi * k + countIdx]! : spec.scale !== 1 ? raw : g.records,
        labels: g.labels,
        trace_id: g.traceId,
        span_id: g.spanId,
        attributes: attrs,
        source,
      });
    }
  }
  return rows;
}

/** Interns integer sequences: equal sequences get the same id (0, 1, 2, ... in first-seen order). */
class SeqInterner {
  private flat = new Int32Array(1024);
  private used = 0;
  private readonly start: number[] = [0];
  private readonly buckets = new Map<number, number | number[]>();

  intern(src: ArrayLike<number>, a: number, b: number): number {
    let h = 0x811c9dc5 ^ (b - a);
    for (let i = a; i < b; i++) h = Math.imul(h ^ src[i]!, 0x01000193);
    const hit = this.buckets.get(h);
    if (hit !== undefined) {
      if (typeof hit === 'number') {
        if (this.equals(hit, src, a, b)) return hit;
      } else {
        for (const id of hit) if (this.equals(id, src, a, b)) return id;
      }
    }
    const id = this.start.length - 1;
    const need = this.used + (b - a);
    if (need > this.flat.length) {
      const grown = new Int32Array(Math.max(need, this.flat.length * 2));
      grown.set(this.flat.subarray(0, this.used));
      this.flat = grown;
    }
    const flat = this.flat;
    let o = this.used;
    for (let i = a; i < b; i++) flat[o++] = src[i]!;
    this.used = o;
    this.start.push(o);
    if (hit === undefined) this.buckets.set(h, id);
    else if (typeof hit === 'number') this.buckets.set(h, [hit, id]);
    else hit.push(id);
    return id;
  }

  private equals(id: number, src: ArrayLike<number>, a: number, b: number): boolean {
    const s = this.start[id]!;
    if (this.start[id + 1]! - s !== b - a) return false;
    const flat = this.flat;
    for (let i = 0; i < b - a; i++) if (flat[s + i] !== src[a + i]) return false;
    return true;
  }
}

function sortKeys<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]!]));
}

export interface HotSpot {
  function: string;
  profile_type: string;
  unit: string;
  sample_count: number;
  total_value: number;
}

/** Per (function, profile_type, unit): summed self value and sample count, largest total first. */
export function hotSpots(rows: readonly Pick<ProfileRow, 'function' | 'profile_type' | 'unit' | 'value' | 'sample_count'>[], limit = Infinity): HotSpot[] {
  const m = new Map<string, HotSpot>();
  for (const r of rows) {
    const key = `${r.function}\u0000${r.profile_type}\u0000${r.unit}`;
    let h = m.get(key);
    if (!h) {
      h = { function: r.function, profile_type: r.profile_type, unit: r.unit, sample_count: 0, total_value: 0 };
      m.set(key, h);
    }
    h.sample_count += r.sample_count;
    h.total_value += r.value;
  }
  const out = [...m.values()].sort(
    (a, b) => b.total_value - a.total_value || b.sample_count - a.sample_count || (a.function < b.function ? -1 : a.function > b.function ? 1 : 0),
  );
  return Number.isFinite(limit) ? out.slice(0, limit) : out;
}
