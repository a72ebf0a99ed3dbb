// Pyroscope ingest: the `name` query parameter (`app{k=v,...}`), the other /ingest parameters,
// and push.v1.PushRequest (protobuf, field numbers in proto/pyroscope/push.proto, or its Connect
// JSON form). Decoding only; the HTTP route (content types, multipart, status codes) is elsewhere.
import { DecodeError } from '../decode-error.js';
import { Wire, utf8 } from './wire.js';

export interface ParsedName {
  service: string;
  labels: Record<string, string>;
}

/**
 * Parses Pyroscope's `name` parameter: service = the text before the first `{` (trimmed); the
 * braces hold `key=value` pairs separated by commas. Tolerant of spaces, single or double quotes
 * (with backslash escapes), commas inside quotes, a trailing comma and a missing `}`. Pairs with an
 * empty key are dropped. Throws MISSING_SERVICE_NAME when the service part is empty.
 */
export function parsePyroscopeName(name: string): ParsedName {
  const brace = name.indexOf('{');
  const service = (brace < 0 ? name : name.slice(0, brace)).trim();
  if (!service) {
    throw new DecodeError('MISSING_SERVICE_NAME', 'the name parameter has no service part', 'use name=<service>{key=value,...}');
  }
  const labels: Record<string, string> = {};
  if (brace < 0) return { service, labels };
  const s = name.slice(brace + 1);
  let i = 0;
  const n = s.length;
  const ws = (): void => {
    while (i < n && (s[i] === ' ' || s[i] === '\t')) i++;
  };
  while (i < n) {
    ws();
    if (s[i] === '}') break;
    // key
    let key = '';
    while (i < n && s[i] !== '=' && s[i] !== ',' && s[i] !== '}') key += s[i++];
    key = key.trim().replace(/^["']|["']$/g, '');
    let value = '';
    if (s[i] === '=') {
      i++;
      ws();
      const q = s[i];
      if (q === '"' || q === "'") {
        i++;
        while (i < n && s[i] !== q) {
          if (s[i] === '\\' && i + 1 < n) i++;
          value += s[i++];
        }
        i++; // closing quote (or end)
        while (i < n && s[i] !== ',' && s[i] !== '}') i++;
      } else {
        while (i < n && s[i] !== ',' && s[i] !== '}') value += s[i++];
        value = value.trim();
      }
    }
    if (key) labels[key] = value;
    if (s[i] === ',') i++;
    else if (s[i] === '}') break;
  }
  return { service, labels };
}

export interface IngestQuery {
  name?: string | null;
  from?: string | number | null;
  until?: string | number | null;
  sampleRate?: string | number | null;
  spyName?: string | null;
  format?: string | null;
}

export interface IngestParams {
  timestampUs?: number;
  durationNs?: number;
  sampleRate?: number;
}

/**
 * Pyroscope's time parameters are Unix seconds; milliseconds, microseconds and nanoseconds are
 * recognised by magnitude. Returns microseconds, or undefined when absent/unparseable.
 */
export function pyroscopeTimeToUs(v: string | number | null | undefined): number | undefined {
  if (v === null || v === undefined || v === '') return undefined;
  const x = typeof v === 'number' ? v : Number(v);
  if (!Number.isFinite(x) || x <= 0) return undefined;
  if (x >= 1e17) return Math.trunc(x / 1000); // ns
  if (x >= 1e14) return Math.trunc(x); // µs
  if (x >= 1e11) return Math.trunc(x * 1000); // ms
  return Math.trunc(x * 1e6); // s
}

/** The query parameters that change meaning: time range and sample rate; refuses non-pprof formats. */
export function ingestParams(q: IngestQuery): IngestParams {
  const format = (q.format ?? '').trim().toLowerCase();
  if (format && format !== 'pprof') {
    throw new DecodeError(
      'LEGACY_FORMAT',
      `format=${format} is not supported`,
      'send pprof (format=pprof) or a push.v1.PushRequest; folded/trie/tree/lines/jfr bodies are not accepted',
    );
  }
  const out: IngestParams = {};
  const from = pyroscopeTimeToUs(q.from);
  const until = pyroscopeTimeToUs(q.until);
  if (from !== undefined) out.timestampUs = from;
  if (from !== undefined && until !== undefined && until > from) out.durationNs = (until - from) * 1000;
  if (q.sampleRate !== null && q.sampleRate !== undefined && q.sampleRate !== '') {
    const r = Number(q.sampleRate);
    if (Number.isFinite(r) && r > 0) out.sampleRate = r;
  }
  return out;
}

export interface PushSample {
  rawProfile: Uint8Array;
  id: string;
}

export interface PushSeries {
  labels: Record<string, string>;
  samples: PushSample[];
}

/** Decodes a push.v1.PushRequest, protobuf or Connect JSON (detected by a leading `{`). */
export function decodePushRequest(body: Uint8Array): PushSeries[] {
  let i = 0;
  while (i < body.length && (body[i] === 0x20 || body[i] === 0x0a || body[i] === 0x0d || body[i] === 0x09)) i++;
  return body[i] === 0x7b ? decodePushJson(body) : decodePushProto(body);
}

function decodePushProto(b: Uint8Array): PushSeries[] {
  const w = new Wire(b, 0, b.length, 'push.v1.PushRequest');
  const series: PushSeries[] = [];
  while (w.pos < w.end) {
    const [f, wt] = w.tag();
    if (f !== 1) {
      w.skip(wt);
      continue;
    }
    w.expect(wt, 2, 'series');
    const s = w.sub();
    const out: PushSeries = { labels: {}, samples: [] };
    while (s.pos < s.end) {
      const [sf, swt] = s.tag();
      if (sf === 1) {
        s.expect(swt, 2, 'labels');
        const l = s.sub();
        let name = '';
        let value = '';
        while (l.pos < l.end) {
          const [lf, lwt] = l.tag();
          if (lf === 1 || lf === 2) {
            l.expect(lwt, 2, 'LabelPair');
            if (lf === 1) name = l.string();
            else value = l.string();
          } else l.skip(lwt);
        }
        out.labels[name] = value;
      } else if (sf === 2) {
        s.expect(swt, 2, 'samples');
        const r = s.sub();
        const sample: PushSample = { rawProfile: new Uint8Array(0), id: '' };
        while (r.pos < r.end) {
          const [rf, rwt] = r.tag();
          if (rf === 1) {
            r.expect(rwt, 2, 'raw_profile');
            sample.rawProfile = r.bytes();
          } else if (rf === 2) {
            r.expect(rwt, 2, 'ID');
            sample.id = r.string();
          } else r.skip(rwt);
        }
        out.samples.push(sample);
      } else s.skip(swt);
    }
    series.push(out);
  }
  return series;
}

/** A label's value: a string, or a number or boolean written unquoted; never an array or object (whose String() recurses without bound). */
function labelValue(v: unknown): string | null {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return null;
}

function decodePushJson(b: Uint8Array): PushSeries[] {
  let doc: unknown;
  try {
    doc = JSON.parse(utf8.decode(b));
  } catch (e) {
    throw new DecodeError('MALFORMED', `invalid push request JSON: ${(e as Error).message}`, 'send push.v1.PushRequest as protobuf or Connect JSON');
  }
  const bad = (what: string): never => {
    throw new DecodeError('MALFORMED', `invalid push request JSON: ${what}`, 'expected {"series":[{"labels":[{"name","value"}],"samples":[{"rawProfile":"<base64>"}]}]}');
  };
  if (!doc || typeof doc !== 'object') bad('not an object');
  const list = (doc as { series?: unknown }).series ?? [];
  if (!Array.isArray(list)) bad('series is not an array');
  return (list as unknown[]).map((s) => {
    if (!s || typeof s !== 'object') bad('series entry is not an object');
    const so = s as { labels?: unknown; samples?: unknown };
    const labels: Record<string, string> = {};
    for (const l of (Array.isArray(so.labels) ? so.labels : []) as { name?: unknown; value?: unknown }[]) {
      if (!l || typeof l.name !== 'string') bad('label without a name');
      labels[l.name as string] = labelValue(l.value) ?? bad('label value is not a string');
    }
    const samples = ((Array.isArray(so.samples) ? so.samples : []) as Record<string, unknown>[]).map((r) => {
      const raw = r?.['rawProfile'] ?? r?.['raw_profile'];
      if (typeof raw !== 'string') bad('sample without rawProfile');
      const std = (raw as string).replace(/-/g, '+').replace(/_/g, '/');
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(std.replace(/\s+/g, ''))) bad('rawProfile is not base64');
      const buf = Buffer.from(std, 'base64');
      const id = r['ID'] ?? r['id'];
      return { rawProfile: new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength), id: typeof id === 'string' ? id : '' };
    });
    return { labels, samples };
  });
}
