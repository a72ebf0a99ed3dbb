// OTLP/JSON as `tds replay` handles it: tell a request's signal from its top-level key, count its
// records, read and move its timestamps (nanoseconds as decimal strings or numbers; moved ones are
// written as strings, as protojson prints 64-bit integers), and prefix its service names — walking
// the same shapes as the protobuf side (replay/shape.ts).
import { REQUESTS, SIGNALS, UNKNOWN_SERVICE, type Shape, type Signal } from './shape.js';
import type { WalkOptions, WalkStats } from './wire.js';

export class JsonShapeError extends Error {}

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The signal of an OTLP/JSON export request, from the key it holds; null when it holds none of them. */
export function jsonSignal(doc: Obj): Signal | null {
  for (const s of SIGNALS) if (REQUESTS[s].keys.some((k) => k in doc)) return s;
  return null;
}

function key(o: Obj, keys: readonly [string, string]): string | null {
  if (keys[0] in o) return keys[0];
  if (keys[1] in o) return keys[1];
  return null;
}

/** A walk's running counts; timestamps as decimal strings (compared by length, then digits), made bigints once at the end. */
interface Acc {
  records: number;
  min: string;
  max: string;
  shiftNs: bigint;
}

const DIGITS = /^\d+$/;

/** A timestamp's decimal digits, without leading zeros ('' for zero). */
function digits(v: unknown, where: string): string {
  let d: string;
  if (typeof v === 'string' && DIGITS.test(v)) d = v;
  else if (typeof v === 'number' && Number.isFinite(v) && v >= 0) d = BigInt(Math.round(v)).toString();
  else throw new JsonShapeError(`${where} is not a timestamp in nanoseconds: ${JSON.stringify(v)?.slice(0, 40)}`);
  let i = 0;
  while (i < d.length && d.charCodeAt(i) === 48) i++;
  return i ? d.slice(i) : d;
}

const less = (a: string, b: string) => a.length < b.length || (a.length === b.length && a < b);

/** A timestamp: moved by the shift (the new value returned, as a string), then counted into the range; 0 (unset) stays unset. */
function onTime(v: unknown, where: string, a: Acc): string | null {
  let d = digits(v, where);
  if (!d) return null;
  if (a.shiftNs) {
    const n = BigInt(d) + a.shiftNs;
    if (n <= 0n || n >= 1n << 64n) throw new JsonShapeError(`${where} moved by ${a.shiftNs} ns leaves the range of a timestamp`);
    d = n.toString();
  }
  if (!a.min || less(d, a.min)) a.min = d;
  if (less(a.max, d)) a.max = d;
  return a.shiftNs ? d : null;
}

function walk(o: Obj, s: Shape, where: string, a: Acc): void {
  if (s.record) a.records++;
  for (const t of s.times) {
    const k = key(o, t.keys);
    if (k === null || o[k] === undefined || o[k] === null) continue;
    if (t.repeated) {
      const list = o[k];
      if (!Array.isArray(list)) throw new JsonShapeError(`${where}.${k} is not a list`);
      list.forEach((v, i) => {
        const moved = onTime(v, `${where}.${k}[${i}]`, a);
        if (moved !== null) list[i] = moved;
      });
    } else {
      const moved = onTime(o[k], `${where}.${k}`, a);
      if (moved !== null) o[k] = moved;
    }
  }
  for (const c of s.children) {
    if (c.shape === 'resource') continue;
    const k = key(o, c.keys);
    if (k === null) continue;
    const v = o[k];
    if (v === undefined || v === null) continue;
    if (!Array.isArray(v)) {
      if (!isObj(v)) throw new JsonShapeError(`${where}.${k} is not an object`);
      walk(v, c.shape as Shape, `${where}.${k}`, a);
      continue;
    }
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      const at = `${where}.${k}[${i}]`;
      if (!isObj(x)) throw new JsonShapeError(`${at} is not an object`);
      walk(x, c.shape as Shape, at, a);
    }
  }
}

/** Counts the request's records and reads its timestamps; with `shiftNs` moves them in `doc` itself. Throws JsonShapeError. */
export function walkJson(doc: Obj, signal: Signal, o: WalkOptions = {}): WalkStats {
  const a: Acc = { records: 0, min: '', max: '', shiftNs: o.shiftNs ?? 0n };
  walk(doc, REQUESTS[signal].shape, signal, a);
  return { records: a.records, minNs: a.min ? BigInt(a.min) : 0n, maxNs: a.max ? BigInt(a.max) : 0n, evidence: 1 };
}

/** Prefixes the service.name of every resource of the request, in place (sets prefix + unknown_service where there is none). */
export function prefixJson(doc: Obj, signal: Signal, prefix: string): void {
  const top = REQUESTS[signal].keys;
  const k = key(doc, top);
  const list = k === null ? [] : doc[k];
  if (!Array.isArray(list)) throw new JsonShapeError(`${k} is not a list`);
  for (const r of list) {
    if (!isObj(r)) throw new JsonShapeError(`an entry of ${k} is not an object`);
    const res = isObj(r['resource']) ? r['resource'] : (r['resource'] = {} as Obj);
    const attrs = Array.isArray(res['attributes']) ? res['attributes'] : (res['attributes'] = [] as unknown[]);
    const kv = attrs.find((a): a is Obj => isObj(a) && a['key'] === 'service.name');
    if (!kv) {
      attrs.push({ key: 'service.name', value: { stringValue: prefix + UNKNOWN_SERVICE } });
      continue;
    }
    const v = isObj(kv['value']) ? kv['value'] : {};
    const current = typeof v['stringValue'] === 'string' ? v['stringValue'] : typeof v['string_value'] === 'string' ? v['string_value'] : '';
    kv['value'] = { stringValue: prefix + (current || UNKNOWN_SERVICE) };
  }
}
