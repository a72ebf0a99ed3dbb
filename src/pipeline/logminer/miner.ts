// The log template miner: per-service bookkeeping (counts, first/last seen, severity, example body,
// bounded sample values, numeric slot stats) around an engine (WASM or reference, see core.ts).
// Pure: no I/O, no timers. The ingest wiring calls mineBatch() per batch of log records of one service
// and upserts the rows it returns into svc_log_templates; at start it calls restore() with that table.
import { messageOf } from './body.js';
import { FLAG_JSON, JSON_MAX_BYTES, MAX_PARAMS, type MinerCore } from './core.js';
import { addSample, computeLogCounters, newSlotStats, slotLabels, type LogCounter, type LogCounterOptions, type SlotStats } from './counters.js';
import { jsonSink, writeJsonAscii } from './params-json.js';

/** Bytes of a body handed to the engine: one more than any rule looks at (plus a UTF-8 sequence). */
const ENCODE_LIMIT = JSON_MAX_BYTES + 4;

/** A row shaped like svc_log_templates (src/store/schema.ts); timestamps in microseconds since the epoch. */
export interface TemplateRow {
  template_id: number;
  service_name: string;
  pattern: string;
  example_body: string | null;
  severity_text: string | null;
  /** µs; also the row's `timestamp` */
  first_seen: number;
  /** µs */
  last_seen: number;
  count: number;
  error_count: number;
  /** JSON object: slot label → up to maxSampleValues distinct values */
  sample_values: string | null;
  evicted: boolean;
  /** the template this one merged into (it generalised to cover this one), else null */
  merged_into: number | null;
  /**
   * the template this one split from: it differs from it in one word, kept apart as a constant of an
   * enum-like position (`Job Started` / `Job Stopped`); else null
   */
  split_from: number | null;
}

/** What restore() accepts: a svc_log_templates row as read back (timestamps as µs, Date, ISO string or bigint). */
export interface StoredTemplateRow {
  template_id: number | bigint;
  service_name: string;
  pattern: string;
  example_body?: string | null;
  severity_text?: string | null;
  first_seen?: number | bigint | Date | string | null;
  last_seen?: number | bigint | Date | string | null;
  count?: number | bigint | null;
  error_count?: number | bigint | null;
  sample_values?: string | null;
  evicted?: boolean | null;
  split_from?: number | bigint | null;
}

export interface MinerOptions {
  /** live templates per service; the least recently used is evicted beyond (default 2000) */
  maxTemplatesPerService?: number;
  /** distinct sample values kept per slot (default 5) */
  maxSampleValues?: number;
  /** slots per template that keep samples and stats (default 8) */
  maxSampleSlots?: number;
  /** characters kept of a parameter value (default 64) */
  maxValueChars?: number;
  /** characters kept of the example body (default 1024) */
  maxExampleChars?: number;
}

export interface BatchMeta {
  /** per line, µs since the epoch (default: now) */
  timestampsUs?: ArrayLike<number>;
  /** per line OTLP severity text */
  severityTexts?: ArrayLike<string | null | undefined>;
  /** per line OTLP severity number (17..24 = ERROR/FATAL) */
  severityNumbers?: ArrayLike<number>;
  /** also return each line's parameter values (costs one string per value) */
  withParams?: boolean;
  /**
   * also return each line's parameter values as the text of a JSON array, `JSON.stringify(params)`
   * (null for none): what svc_logs.template_params stores, written from the engine's bytes with one
   * string a line (ingest: a string per value, an array and JSON.stringify cost more than the mining)
   */
  withParamsJson?: boolean;
}

export interface MineBatchResult {
  /** template id of each line (integers, exact in a double) */
  templateIds: Float64Array;
  /** per line: 1 = the template is new, 2 = its pattern changed (core.ts FLAG_*) */
  flags: Uint8Array;
  /** rows of templates created or changed in this batch (to upsert) */
  changed: TemplateRow[];
  /**
   * rows of templates retired in this batch (evicted = true; their ids are never reused): evicted
   * by the cap, or merged (merged_into set; their counts move to that template)
   */
  evicted: TemplateRow[];
  /** per line parameter values, when meta.withParams */
  params?: string[][];
  /** per line `JSON.stringify(params)`, or null when the line has none, when meta.withParamsJson */
  paramsJson?: (string | null)[];
}

interface Rec {
  id: number;
  service: string;
  pattern: string;
  example: string | null;
  severity: string | null;
  first: number;
  last: number;
  count: number;
  errors: number;
  /** slot → distinct sample values (sparse; at most maxSampleSlots slots) */
  samples: (string[] | undefined)[];
  nSampleSlots: number;
  /** sample_values JSON as last built; undefined once samples or pattern change (rows are built per batch) */
  sampleJson?: string | null;
  /** slot → numeric stats (sparse; at most maxSampleSlots slots) */
  stats: (SlotStats | undefined)[];
  nStatSlots: number;
  dirty: boolean;
  /** when the row was last drained (ms since the epoch; 0 = never) */
  drainedAt: number;
  splitFrom: number | null;
  /** pattern or samples changed since the row was last drained */
  stale: boolean;
}

const ERROR_TEXTS = new Set(['ERROR', 'ERR', 'FATAL', 'CRITICAL', 'CRIT', 'ALERT', 'EMERG', 'EMERGENCY', 'SEVERE', 'PANIC']);

function toMicros(v: number | bigint | Date | string | null | undefined, dflt: number): number {
  if (v === null || v === undefined) return dflt;
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof Date) return v.getTime() * 1000;
  const t = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(v) ? v : v.replace(' ', 'T') + 'Z');
  return Number.isNaN(t) ? dflt : t * 1000;
}

export class LogMiner {
  readonly impl: 'wasm' | 'reference';
  private readonly core: MinerCore;
  private readonly services = new Map<string, number>();
  private readonly recs = new Map<number, Rec>();
  private dirty: Rec[] = [];
  private readonly enc = new TextEncoder();
  private readonly dec = new TextDecoder('utf-8', { fatal: false });
  private readonly maxSamples: number;
  private readonly maxSlots: number;
  private readonly maxValueChars: number;
  private readonly maxExampleChars: number;

  constructor(core: MinerCore, opts: MinerOptions = {}) {
    this.core = core;
    this.impl = core.kind;
    this.maxSamples = opts.maxSampleValues ?? 5;
    this.maxSlots = opts.maxSampleSlots ?? 8;
    this.maxValueChars = opts.maxValueChars ?? 64;
    this.maxExampleChars = opts.maxExampleChars ?? 1024;
  }

  private svc(name: string): number {
    let i = this.services.get(name);
    if (i === undefined) {
      i = this.services.size;
      this.services.set(name, i);
    }
    return i;
  }

  /** Mines one batch of log bodies of one service. Bodies may be strings or raw bytes. One function: one pass over the batch filling the engine's input buffers and reading its output back, with both views local. */
  mineBatch(service: string, bodies: ReadonlyArray<string | Uint8Array>, meta: BatchMeta = {}): MineBatchResult {
    const n = bodies.length;
    const svc = this.svc(service);
    // The message of a structured or multi-line body is what is mined (body.ts); the rest of it
    // becomes parameters. `texts` aliases `bodies` until one differs.
    let texts: (string | Uint8Array)[] | readonly (string | Uint8Array)[] = bodies;
    let extras: (string[] | undefined)[] | undefined;
    let jsonLines: Uint8Array | undefined;
    for (let i = 0; i < n; i++) {
      const b = bodies[i]!;
      const v = messageOf(typeof b === 'string' ? b : this.structuredText(b));
      if (v === null) continue;
      if (texts === bodies) {
        texts = bodies.slice();
        extras = [];
        jsonLines = new Uint8Array(n);
      }
      (texts as (string | Uint8Array)[])[i] = v.text;
      if (v.extras.length) extras![i] = v.extras;
      if (v.json) jsonLines![i] = 1;
    }
    // encode all bodies into the engine's input buffer (for WASM: its own memory)
    // Only the first ENCODE_LIMIT bytes of a body can change the engine's output (text matching looks
    // at MATCH_BYTES, a JSON body longer than JSON_MAX_BYTES is text), so a 1 MB body costs no more
    // than a 16 KB one. A string is cut to ENCODE_LIMIT UTF-16 units first (≥ as many bytes).
    let total = 0;
    let short = true; // every body a string within ENCODE_LIMIT: try the one-call ASCII fast path
    for (let i = 0; i < n; i++) {
      const b = texts[i]!;
      const len = typeof b === 'string' ? b.length * 3 : b.length;
      total += len < ENCODE_LIMIT ? len : ENCODE_LIMIT;
      if (typeof b !== 'string' || b.length > ENCODE_LIMIT) short = false;
    }
    const input = this.core.prepare(total, n);
    const bytes = input.bytes;
    const offsets = input.offsets;
    let pos = 0;
    let start = 0;
    if (short && n > 1) {
      // one encodeInto for the whole batch; if it was all ASCII, byte offsets equal char offsets
        const joined = (texts as readonly string[]).join('');
      if (this.enc.encodeInto(joined, bytes).written === joined.length) {
        for (let i = 0; i < n; i++) {
          offsets[i] = pos;
          pos += (texts[i] as string).length;
        }
        start = n;
      }
    }
    for (let i = start; i < n; i++) {
      offsets[i] = pos;
      const b = texts[i]!;
      if (typeof b === 'string') {
        const src = b.length > ENCODE_LIMIT ? b.slice(0, ENCODE_LIMIT) : b;
        pos += this.enc.encodeInto(src, bytes.subarray(pos, pos + ENCODE_LIMIT)).written;
      } else {
        const src = b.length > ENCODE_LIMIT ? b.subarray(0, ENCODE_LIMIT) : b;
        bytes.set(src, pos);
        pos += src.length;
      }
    }
    offsets[n] = pos;
    const out = this.core.mine(svc, n);
    // the engine may have grown its memory: views taken before mine() can be stale, and the views in
    // `out` are only valid until the next engine call (patternBytes below), so copy out what is kept
    const bytesOut = this.core.prepare(0, 0).bytes;
    // Buffer's decode of a short slice costs about half of TextDecoder's (no subarray, no options).
    const data = Buffer.from(bytesOut.buffer, bytesOut.byteOffset, bytesOut.byteLength);
    const templateIds = out.ids.slice(0, n);
    const flagsOut = out.flags.slice(0, n);
    if (jsonLines) for (let i = 0; i < n; i++) flagsOut[i]! |= jsonLines[i]! ? FLAG_JSON : 0;
    const changedIds = out.changed.slice(0, out.changedCount);
    const evictedIds = out.evicted.slice(0, out.evictedCount);
    const evictedInto = out.evictedInto.slice(0, out.evictedCount);
    const now = Date.now() * 1000;
    const ts = meta.timestampsUs;
    const sevT = meta.severityTexts;
    const sevN = meta.severityNumbers;
    const params: string[][] | undefined = meta.withParams ? [] : undefined;
    const paramsJson: (string | null)[] | undefined = meta.withParamsJson ? [] : undefined;
    const js = jsonSink;
    js.n = 0;
    const maxSlots = this.maxSlots;
    const maxSamples = this.maxSamples;
    let lastId = -1;
    let lastRec: Rec | undefined;
    let lastSevText: string | null | undefined = null;
    let lastSevError = false;
    for (let li = 0; li < n; li++) {
      const id = templateIds[li]!;
      const t = ts ? ts[li]! : now;
      let r = id === lastId ? lastRec : this.recs.get(id);
      if (!r) {
        const body = bodies[li]!;
        const example = typeof body === 'string' ? body.slice(0, this.maxExampleChars) : this.dec.decode(body.subarray(0, this.maxExampleChars * 4));
        r = {
          id, service, pattern: '', example: example.slice(0, this.maxExampleChars), severity: null,
          first: t, last: t, count: 0, errors: 0, samples: [], nSampleSlots: 0, stats: [], nStatSlots: 0, dirty: false, drainedAt: 0, stale: true,
          splitFrom: out.splitFrom[li]! > 0 ? out.splitFrom[li]! : null,
        };
        this.recs.set(id, r);
      }
      lastId = id;
      lastRec = r;
      r.count++;
      if (t < r.first) r.first = t;
      if (t > r.last) r.last = t;
      const st = sevT ? sevT[li] : undefined;
      const sn = sevN ? sevN[li]! : 0;
      if (st && r.severity === null) r.severity = st;
      if (st !== lastSevText) {
        // a batch's lines mostly repeat a few texts: upper-cased once per run, not once a line
        lastSevText = st;
        lastSevError = !!st && ERROR_TEXTS.has(st.toUpperCase());
      }
      if (sn >= 17 || lastSevError) r.errors++;
      if (!r.dirty) {
        r.dirty = true;
        this.dirty.push(r);
      }
      const pc = out.paramCount[li]!;
      const base = li * MAX_PARAMS;
      const lineParams: string[] | undefined = params ? [] : undefined;
      // sampling decodes a value: done for the first 32 lines of a template, then every 64th line
      const sampling = r.count <= 32 || (r.count & 63) === 0;
      const jsonStart = js.n;
      let jsonAscii = true;
      for (let k = 0; k < pc; k++) {
        const slot = out.paramSlot[base + k]!;
        const num = out.paramNum[base + k]!;
        if (num === num) {
          let stats = r.stats[slot];
          if (stats === undefined && r.nStatSlots < maxSlots) {
            r.stats[slot] = stats = newSlotStats();
            r.nStatSlots++;
          }
          if (stats !== undefined) addSample(stats, num);
        }
        let samples = r.samples[slot];
        const want = sampling && (samples !== undefined ? samples.length < maxSamples : r.nSampleSlots < maxSlots);
        if (!want && !paramsJson && !lineParams) continue;
        const s = out.paramStart[base + k]!;
        const len = Math.min(out.paramLen[base + k]!, this.maxValueChars * 4);
        // An ASCII value goes to the JSON text as bytes; any other is decoded and stringified.
        if (paramsJson) {
          js.byte(k ? 0x2c : 0x5b);
          if (!writeJsonAscii(js, data, s, Math.min(len, this.maxValueChars))) {
            jsonAscii = false;
            js.utf8(JSON.stringify(data.toString('utf8', s, s + len).slice(0, this.maxValueChars)));
          }
        }
        if (want || lineParams) {
          const v = data.toString('utf8', s, s + len).slice(0, this.maxValueChars);
          if (lineParams) lineParams.push(v);
          if (want) {
            if (samples === undefined) {
              r.samples[slot] = samples = [];
              r.nSampleSlots++;
            }
            if (!samples.includes(v)) {
              samples.push(v);
              r.sampleJson = undefined;
              r.stale = true;
            }
          }
        }
      }
      const x = extras?.[li];
      if (params) {
        if (x) for (const v of x) if (lineParams!.length < MAX_PARAMS) lineParams!.push(v.slice(0, this.maxValueChars));
        params.push(lineParams!);
      }
      if (paramsJson) {
        let count = pc;
        if (x) {
          for (let e = 0; e < x.length && count < MAX_PARAMS; e++, count++) {
            js.byte(count ? 0x2c : 0x5b);
            js.utf8(JSON.stringify(x[e]!.slice(0, this.maxValueChars)));
            jsonAscii = false;
          }
        }
        if (count) {
          js.byte(0x5d);
          paramsJson.push(jsonAscii ? js.b.latin1Slice(jsonStart, js.n) : js.b.utf8Slice(jsonStart, js.n));
        } else paramsJson.push(null);
      }
    }
    // a merged template's counts move to the template it merged into, before rows are built
    for (let k = 0; k < evictedIds.length; k++) {
      const from = this.recs.get(evictedIds[k]!);
      const into = evictedInto[k]! > 0 ? this.recs.get(evictedInto[k]!) : undefined;
      if (!from || !into) continue;
      into.count += from.count;
      into.errors += from.errors;
      if (from.first < into.first) into.first = from.first;
      if (from.last > into.last) into.last = from.last;
      into.stale = true;
      if (!into.dirty) {
        into.dirty = true;
        this.dirty.push(into);
      }
    }
    const changed: TemplateRow[] = [];
    for (const id of changedIds) {
      const r = this.recs.get(id);
      const pat = this.core.patternBytes(id);
      if (!r || !pat) continue;
      r.pattern = this.dec.decode(pat);
      r.sampleJson = undefined; // labels come from the pattern
      r.stale = true;
      changed.push(this.row(r));
    }
    // evictions (also of templates created in this batch): rows marked evicted, state dropped
    const evictedRows: TemplateRow[] = [];
    for (let k = 0; k < evictedIds.length; k++) {
      const id = evictedIds[k]!;
      const r = this.recs.get(id);
      if (!r) continue;
      const pat = this.core.patternBytes(id);
      if (pat) r.pattern = this.dec.decode(pat);
      r.sampleJson = undefined;
      evictedRows.push({ ...this.row(r), evicted: true, merged_into: evictedInto[k]! > 0 ? evictedInto[k]! : null });
      this.recs.delete(id);
      r.dirty = false;
    }
    js.shrink(); // the batch's JSON is in its strings; a buffer grown by an unusual batch is given back
    return {
      templateIds,
      flags: flagsOut,
      changed,
      evicted: evictedRows,
      ...(params ? { params } : {}),
      ...(paramsJson ? { paramsJson } : {}),
    };
  }

  /** A byte body as text when it may be structured or multi-line (body.ts reads strings), else '' (mined as bytes). */
  private structuredText(b: Uint8Array): string {
    let i = 0;
    while (i < b.length && (b[i] === 32 || b[i] === 9)) i++;
    return b[i] === 123 || b.indexOf(10) >= 0 || b.indexOf(61) >= 0 ? this.dec.decode(b.subarray(0, ENCODE_LIMIT)) : '';
  }

  private sampleValues(r: Rec): string | null {
    if (r.sampleJson !== undefined) return r.sampleJson;
    let sample: string | null = null;
    if (r.nSampleSlots > 0) {
      const o: Record<string, string[]> = {};
      const labels = slotLabels(r.pattern);
      r.samples.forEach((vals, slot) => {
        if (vals) o[labels.get(slot) ?? `p${slot}`] = vals;
      });
      sample = JSON.stringify(o);
    }
    return (r.sampleJson = sample);
  }

  private row(r: Rec): TemplateRow {
    const sample = this.sampleValues(r);
    return {
      template_id: r.id,
      service_name: r.service,
      pattern: r.pattern,
      example_body: r.example,
      severity_text: r.severity,
      first_seen: r.first,
      last_seen: r.last,
      count: r.count,
      error_count: r.errors,
      sample_values: sample,
      evicted: false,
      merged_into: null,
      split_from: r.splitFrom,
    };
  }

  /**
   * Rows of templates touched since they were last drained: to upsert. A template that is new, or
   * whose pattern or samples changed, comes at once; one whose counts / last_seen merely moved comes
   * at most every `countsEveryMs` (the rest stay pending), so a busy template is not rewritten by
   * every batch.
   */
  drainDirty(countsEveryMs = 0, now = Date.now()): TemplateRow[] {
    const rows: TemplateRow[] = [];
    const pending: Rec[] = [];
    for (const r of this.dirty) {
      if (!r.dirty) continue;
      if (r.stale || now - r.drainedAt >= countsEveryMs) {
        rows.push(this.row(r));
        r.dirty = false;
        r.stale = false;
        r.drainedAt = now;
      } else pending.push(r);
    }
    this.dirty = pending;
    return rows;
  }

  /**
   * Templates whose drained rows were not committed (the commit failed: a full disk): each is drained
   * again at once with the next batch, so no stored log names a template that was never stored.
   */
  unsent(ids: readonly number[]): void {
    for (const id of ids) {
      const r = this.recs.get(id);
      if (!r) continue; // evicted since: its row is no longer needed
      r.stale = true;
      if (!r.dirty) {
        r.dirty = true;
        this.dirty.push(r);
      }
    }
  }

  /** Current row of a live template. */
  template(id: number): TemplateRow | undefined {
    const r = this.recs.get(id);
    return r ? this.row(r) : undefined;
  }

  /** All live templates of a service. */
  templates(service: string): TemplateRow[] {
    const out: TemplateRow[] = [];
    for (const r of this.recs.values()) if (r.service === service) out.push(this.row(r));
    return out;
  }

  /** Live templates per service. */
  liveCount(service: string): number {
    const i = this.services.get(service);
    return i === undefined ? 0 : this.core.liveCount(i);
  }

  /** The diagnosis's log_counters for a service (pure function of the slot stats). */
  logCounters(service: string, opts?: LogCounterOptions): LogCounter[] {
    const src: { pattern: string; stats: Map<number, SlotStats> }[] = [];
    for (const r of this.recs.values()) {
      if (r.service !== service || r.nStatSlots === 0) continue;
      const stats = new Map<number, SlotStats>();
      r.stats.forEach((st, slot) => st && stats.set(slot, st));
      src.push({ pattern: r.pattern, stats });
    }
    return computeLogCounters(src, opts);
  }

  /**
   * Rebuilds the state from svc_log_templates rows (any order): live templates keep their ids and
   * patterns, the least recently seen are the first to be evicted, and new ids start above every id
   * in the rows (evicted ones included), so an id never changes meaning.
   */
  restore(rows: Iterable<StoredTemplateRow>): void {
    const list = [...rows];
    let maxId = 0;
    for (const r of list) maxId = Math.max(maxId, Number(r.template_id));
    const live = list
      .filter((r) => !r.evicted)
      .map((r) => ({ r, last: toMicros(r.last_seen, 0), id: Number(r.template_id) }))
      .sort((a, b) => a.last - b.last || a.id - b.id);
    for (const { r, last, id } of live) {
      const svc = this.svc(r.service_name);
      this.core.restore(svc, id, this.enc.encode(r.pattern));
      const pat = this.core.patternBytes(id);
      if (!pat) continue;
      const rec: Rec = {
        id, service: r.service_name, pattern: this.dec.decode(pat), example: r.example_body ?? null,
        severity: r.severity_text ?? null, first: toMicros(r.first_seen, last), last,
        count: Number(r.count ?? 0), errors: Number(r.error_count ?? 0), samples: [], nSampleSlots: 0, stats: [],
        nStatSlots: 0, dirty: false, drainedAt: 0, stale: false, splitFrom: r.split_from == null ? null : Number(r.split_from),
      };
      if (r.sample_values) {
        try {
          const o = JSON.parse(r.sample_values) as Record<string, unknown>;
          const byLabel = new Map<string, number>();
          for (const [slot, label] of slotLabels(rec.pattern)) byLabel.set(label, slot);
          for (const [k, v] of Object.entries(o)) {
            const slot = byLabel.get(k);
            if (slot !== undefined && Array.isArray(v) && rec.samples[slot] === undefined && rec.nSampleSlots < this.maxSlots) {
              rec.samples[slot] = v.map(String).slice(0, this.maxSamples);
              rec.nSampleSlots++;
            }
          }
        } catch {
          // unreadable sample_values: start afresh
        }
      }
      this.recs.set(id, rec);
    }
    // rows evicted by restore itself (more live rows than the cap) are dropped
    for (const id of [...this.recs.keys()]) if (!this.core.isLive(id)) this.recs.delete(id);
    this.core.setNextId(maxId + 1);
  }

  /**
   * Takes `count` ids the miner will never hand out, all above `above` (a restore's renumbered
   * templates); raises the next id past `above` too, so that ids of the restore's other templates
   * are not handed out either. Returns the first id taken.
   */
  reserveIds(above: number, count: number): number {
    this.core.setNextId(above + 1);
    const first = this.core.nextId();
    this.core.setNextId(first + count);
    return first;
  }

  /** Next template id the miner will hand out. */
  nextTemplateId(): number {
    return this.core.nextId();
  }
}
