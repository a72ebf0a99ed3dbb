// OTLP profiles (opentelemetry.proto.profiles.v1development, the version with the request-wide
// ProfilesDictionary and Sample.stack_index) → svc_profiles rows through the same pprofToRows as
// pprof. A lean hand-written decoder; field numbers from opentelemetry-proto's profiles.proto and
// checked against the eBPF profiler capture in ../shared/corpora/otlp/grafana-pyroscope:
//   ExportProfilesServiceRequest: resource_profiles 1, dictionary 2
//   ProfilesDictionary: mapping_table 1, location_table 2, function_table 3, link_table 4,
//     string_table 5, attribute_table 6, stack_table 7
//   ResourceProfiles: resource 1, scope_profiles 2 · ScopeProfiles: scope 1, profiles 2
//   Profile: sample_type 1, samples 2, time_unix_nano 3 (fixed64), duration_nano 4, period_type 5,
//     period 6, profile_id 7, attribute_indices 11
//   Sample: stack_index 1, attribute_indices 2, link_index 3, values 4, timestamps_unix_nano 5 (fixed64)
//   Stack: location_indices 1 · Location: mapping_index 1, address 2, lines 3, attribute_indices 4
//   Line: function_index 1, line 2, column 3 · Function: name 1, system_name 2, filename 3, start_line 4
//   Mapping: memory_start 1, memory_limit 2, file_offset 3, filename_strindex 4
//   KeyValueAndUnit: key_strindex 1, value 2, unit_strindex 3 · Link: trace_id 1, span_id 2
// Each Profile becomes one DecodedPprof sharing the dictionary's arrays; a sample's value is the sum
// of its `values`, or the number of its timestamps when `values` is empty (one event each).
// service = resource attribute service.name, else options.defaultService ('unknown_service').
import type { DecodedPprof } from './decoded.js';
import { DecodeError } from '../decode-error.js';
import { pprofToRows, type ProfileRow } from './rows.js';
import { Wire, hex, utf8 } from './wire.js';

export interface OtlpProfilesOptions {
  defaultService?: string;
  /** Bound on decoded elements (repeated integers + messages); above it TOO_LARGE. Default 16M. */
  maxItems?: number;
  nowUs?: () => number;
}

interface Dictionary {
  strOff: Uint32Array;
  strLen: Uint32Array;
  /** Strings added by this decoder (attribute values, hex ids), indexed after the string table. */
  extra: string[];
  locMapping: Int32Array;
  locAddr: BigUint64Array;
  locLineStart: Uint32Array;
  lineFunc: Int32Array;
  lineNo: Float64Array;
  fnName: Int32Array;
  fnSystemName: Int32Array;
  fnFilename: Int32Array;
  fnStartLine: Float64Array;
  mapFilename: Int32Array;
  stacks: number[][];
  links: { traceId: string; spanId: string }[];
  /** Attribute table entries as (key string index, string-value index or -1, numeric value). */
  attrKey: number[];
  attrStr: number[];
  attrNum: number[];
  attrValue: (string | number | boolean)[];
}

type AnyValue = string | number | boolean | null;

function readAnyValue(w: Wire): AnyValue {
  let v: AnyValue = null;
  while (w.pos < w.end) {
    const [f, wt] = w.tag();
    if (f === 1 && wt === 2) v = w.string();
    else if (f === 2 && wt === 0) v = w.uint() !== 0;
    else if (f === 3 && wt === 0) v = w.int();
    else if (f === 4 && wt === 1) v = w.double();
    else if (f === 7 && wt === 2) v = hex(w.bytes());
    else w.skip(wt); // arrays and kvlists are not flattened
  }
  return v;
}

function readKeyValue(w: Wire): [string, AnyValue] {
  let k = '';
  let v: AnyValue = null;
  while (w.pos < w.end) {
    const [f, wt] = w.tag();
    if (f === 1 && wt === 2) k = w.string();
    else if (f === 2 && wt === 2) v = readAnyValue(w.sub());
    else w.skip(wt);
  }
  return [k, v];
}

// One function: one pass over the dictionary's fields, each table's offsets collected in the same loop.
function readDictionary(w: Wire): Dictionary {
  const strOff: number[] = [];
  const strLen: number[] = [];
  const locMapping: number[] = [];
  const locAddr: bigint[] = [];
  const locLineStart: number[] = [];
  const lineFunc: number[] = [];
  const lineNo: number[] = [];
  const fnName: number[] = [];
  const fnSystemName: number[] = [];
  const fnFilename: number[] = [];
  const fnStartLine: number[] = [];
  const mapFilename: number[] = [];
  const stacks: number[][] = [];
  const links: { traceId: string; spanId: string }[] = [];
  const attrRaw: { key: number; value: AnyValue }[] = [];
  while (w.pos < w.end) {
    const [f, wt] = w.tag();
    if (f < 1 || f > 7) {
      w.skip(wt);
      continue;
    }
    w.expect(wt, 2, 'dictionary table');
    const m = w.sub();
    if (f === 5) {
      strOff.push(m.pos);
      strLen.push(m.end - m.pos);
      continue;
    }
    if (f === 1) {
      let file = 0;
      while (m.pos < m.end) {
        const [mf, mwt] = m.tag();
        if (mf === 4 && mwt === 0) file = m.uint();
        else m.skip(mwt);
      }
      mapFilename.push(file);
    } else if (f === 2) {
      let mi = 0;
      let addr = 0n;
      locLineStart.push(lineFunc.length);
      while (m.pos < m.end) {
        const [lf, lwt] = m.tag();
        if (lf === 1 && lwt === 0) mi = m.uint();
        else if (lf === 2 && lwt === 0) {
          m.varintParts();
          addr = (BigInt(m.hi) << 32n) | BigInt(m.lo);
        } else if (lf === 3 && lwt === 2) {
          const l = m.sub();
          let fi = 0;
          let ln = 0;
          while (l.pos < l.end) {
            const [xf, xwt] = l.tag();
            if (xf === 1 && xwt === 0) fi = l.uint();
            else if (xf === 2 && xwt === 0) ln = l.int();
            else l.skip(xwt);
          }
          lineFunc.push(fi);
          lineNo.push(ln);
        } else m.skip(lwt);
      }
      locMapping.push(mi);
      locAddr.push(addr);
    } else if (f === 3) {
      const v = [0, 0, 0, 0];
      while (m.pos < m.end) {
        const [ff, fwt] = m.tag();
        if (ff >= 1 && ff <= 4 && fwt === 0) v[ff - 1] = ff === 4 ? m.int() : m.uint();
        else m.skip(fwt);
      }
      fnName.push(v[0]!);
      fnSystemName.push(v[1]!);
      fnFilename.push(v[2]!);
      fnStartLine.push(v[3]!);
    } else if (f === 4) {
      let t = '';
      let s = '';
      while (m.pos < m.end) {
        const [kf, kwt] = m.tag();
        if (kf === 1 && kwt === 2) t = hex(m.bytes());
        else if (kf === 2 && kwt === 2) s = hex(m.bytes());
        else m.skip(kwt);
      }
      links.push({ traceId: t, spanId: s });
    } else if (f === 6) {
      let key = 0;
      let value: AnyValue = null;
      while (m.pos < m.end) {
        const [af, awt] = m.tag();
        if (af === 1 && awt === 0) key = m.uint();
        else if (af === 2 && awt === 2) value = readAnyValue(m.sub());
        else m.skip(awt);
      }
      attrRaw.push({ key, value });
    } else if (f === 7) {
      const ids: number[] = [];
      while (m.pos < m.end) {
        const [sf, swt] = m.tag();
        if (sf === 1) m.ints(swt, ids);
        else m.skip(swt);
      }
      stacks.push(ids);
    }
  }
  const nStr = strOff.length;
  const nFn = fnName.length;
  const nMap = mapFilename.length;
  const nLoc = locMapping.length;
  const badStr = (i: number): boolean => i >= nStr;
  if (fnName.some(badStr) || fnSystemName.some(badStr) || fnFilename.some(badStr) || mapFilename.some(badStr) || attrRaw.some((a) => badStr(a.key))) {
    throw new DecodeError('MALFORMED', 'OTLP profiles: string index past the string table', 'send a valid ExportProfilesServiceRequest');
  }
  if (lineFunc.some((i) => i >= nFn) || locMapping.some((i) => i >= nMap && i !== 0)) {
    throw new DecodeError('MALFORMED', 'OTLP profiles: function or mapping index out of range', 'send a valid ExportProfilesServiceRequest');
  }
  if (stacks.some((s) => s.some((i) => i >= nLoc))) {
    throw new DecodeError('MALFORMED', 'OTLP profiles: stack references a location past the location table', 'send a valid ExportProfilesServiceRequest');
  }
  locLineStart.push(lineFunc.length);
  const extra: string[] = [];
  const attrKey: number[] = [];
  const attrStr: number[] = [];
  const attrNum: number[] = [];
  const attrValue: (string | number | boolean)[] = [];
  for (const a of attrRaw) {
    attrKey.push(a.key);
    if (typeof a.value === 'number') {
      attrStr.push(-1);
      attrNum.push(a.value);
    } else {
      const s = a.value === null ? '' : String(a.value);
      attrStr.push(s === '' ? 0 : nStr + extra.push(s) - 1);
      attrNum.push(0);
    }
    attrValue.push(a.value ?? '');
  }
  return {
    strOff: Uint32Array.from(strOff),
    strLen: Uint32Array.from(strLen),
    extra,
    locMapping: Int32Array.from(locMapping, (i) => (i < nMap ? i : -1)),
    locAddr: BigUint64Array.from(locAddr),
    locLineStart: Uint32Array.from(locLineStart),
    lineFunc: Int32Array.from(lineFunc),
    lineNo: Float64Array.from(lineNo),
    fnName: Int32Array.from(fnName),
    fnSystemName: Int32Array.from(fnSystemName),
    fnFilename: Int32Array.from(fnFilename),
    fnStartLine: Float64Array.from(fnStartLine),
    mapFilename: Int32Array.from(mapFilename),
    stacks,
    links,
    attrKey,
    attrStr,
    attrNum,
    attrValue,
  };
}

interface RawSample {
  stack: number;
  attrs: number[];
  link: number;
  values: number[];
  timestamps: number;
}

interface RawProfile {
  type: number;
  unit: number;
  periodType: number;
  periodUnit: number;
  period: number;
  timeNanos: bigint;
  durationNanos: number;
  profileId: string | null;
  attrs: number[];
  samples: RawSample[];
}

function readValueType(w: Wire): [number, number] {
  let t = 0;
  let u = 0;
  while (w.pos < w.end) {
    const [f, wt] = w.tag();
    if (f === 1 && wt === 0) t = w.uint();
    else if (f === 2 && wt === 0) u = w.uint();
    else w.skip(wt);
  }
  return [t, u];
}

function readProfile(w: Wire): RawProfile {
  const p: RawProfile = { type: 0, unit: 0, periodType: 0, periodUnit: 0, period: 0, timeNanos: 0n, durationNanos: 0, profileId: null, attrs: [], samples: [] };
  while (w.pos < w.end) {
    const [f, wt] = w.tag();
    if (f === 1 && wt === 2) [p.type, p.unit] = readValueType(w.sub());
    else if (f === 2 && wt === 2) {
      const s = w.sub();
      const r: RawSample = { stack: 0, attrs: [], link: 0, values: [], timestamps: 0 };
      while (s.pos < s.end) {
        const [sf, swt] = s.tag();
        if (sf === 1 && swt === 0) r.stack = s.uint();
        else if (sf === 2) s.ints(swt, r.attrs);
        else if (sf === 3 && swt === 0) r.link = s.uint();
        else if (sf === 4) s.ints(swt, r.values, true);
        else if (sf === 5) {
          const ts: bigint[] = [];
          s.fixed64s(swt, ts);
          r.timestamps += ts.length;
        } else s.skip(swt);
      }
      p.samples.push(r);
    } else if (f === 3 && wt === 1) p.timeNanos = w.fixed64();
    else if (f === 4 && wt === 0) p.durationNanos = w.uint();
    else if (f === 5 && wt === 2) [p.periodType, p.periodUnit] = readValueType(w.sub());
    else if (f === 6 && wt === 0) p.period = w.int();
    else if (f === 7 && wt === 2) {
      const id = w.bytes();
      p.profileId = id.some((x) => x !== 0) ? hex(id) : null;
    } else if (f === 11) w.ints(wt, p.attrs);
    else w.skip(wt);
  }
  return p;
}

function toDecoded(bytes: Uint8Array, d: Dictionary, p: RawProfile, keyIdx: { trace: number; span: number }): DecodedPprof {
  const nStr = d.strOff.length;
  if ([p.type, p.unit, p.periodType, p.periodUnit].some((i) => i >= nStr)) {
    throw new DecodeError('MALFORMED', 'OTLP profiles: string index past the string table', 'send a valid ExportProfilesServiceRequest');
  }
  const n = p.samples.length;
  const sampleLocStart = new Uint32Array(n + 1);
  const sampleLabStart = new Uint32Array(n + 1);
  const values = new Float64Array(n);
  const loc: number[] = [];
  const labKey: number[] = [];
  const labStr: number[] = [];
  const labNum: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = p.samples[i]!;
    sampleLocStart[i] = loc.length;
    sampleLabStart[i] = labKey.length;
    const stack = d.stacks[s.stack];
    if (!stack) throw new DecodeError('MALFORMED', `OTLP profiles: stack_index ${s.stack} out of range`, 'send a valid ExportProfilesServiceRequest');
    for (const li of stack) loc.push(li);
    let v = 0;
    if (s.values.length) for (const x of s.values) v += x;
    else v = s.timestamps || 1;
    values[i] = v;
    for (const ai of s.attrs) {
      if (ai >= d.attrKey.length) throw new DecodeError('MALFORMED', `OTLP profiles: attribute index ${ai} out of range`, 'send a valid ExportProfilesServiceRequest');
      if (ai === 0) continue;
      labKey.push(d.attrKey[ai]!);
      labStr.push(Math.max(0, d.attrStr[ai]!));
      labNum.push(d.attrNum[ai]!);
    }
    if (s.link > 0) {
      const l = d.links[s.link];
      if (!l) throw new DecodeError('MALFORMED', `OTLP profiles: link index ${s.link} out of range`, 'send a valid ExportProfilesServiceRequest');
      if (l.traceId && /[^0]/.test(l.traceId)) {
        labKey.push(keyIdx.trace);
        labStr.push(nStr + d.extra.push(l.traceId) - 1);
        labNum.push(0);
      }
      if (l.spanId && /[^0]/.test(l.spanId)) {
        labKey.push(keyIdx.span);
        labStr.push(nStr + d.extra.push(l.spanId) - 1);
        labNum.push(0);
      }
    }
  }
  sampleLocStart[n] = loc.length;
  sampleLabStart[n] = labKey.length;
  const nLoc = d.locMapping.length;
  return {
    bytes,
    strOff: d.strOff,
    strLen: d.strLen,
    extraStrings: d.extra,
    sampleTypes: Int32Array.of(p.type, p.unit),
    valuesPerSample: 1,
    timeNanos: p.timeNanos,
    durationNanos: BigInt(p.durationNanos),
    period: BigInt(p.period),
    periodType: p.periodType,
    periodUnit: p.periodUnit,
    defaultSampleType: 0,
    dropFrames: 0,
    keepFrames: 0,
    sampleLocStart,
    sampleLoc: Int32Array.from(loc),
    values,
    sampleLabStart,
    labKey: Int32Array.from(labKey),
    labStr: Int32Array.from(labStr),
    labNum: Float64Array.from(labNum),
    labNumUnit: new Int32Array(labKey.length),
    locId: Float64Array.from({ length: nLoc }, (_, i) => i),
    locMapping: d.locMapping,
    locAddr: d.locAddr,
    locLineStart: d.locLineStart,
    lineFunc: d.lineFunc,
    lineNo: d.lineNo,
    fnId: Float64Array.from({ length: d.fnName.length }, (_, i) => i),
    fnName: d.fnName,
    fnSystemName: d.fnSystemName,
    fnFilename: d.fnFilename,
    fnStartLine: d.fnStartLine,
    mapId: Float64Array.from({ length: d.mapFilename.length }, (_, i) => i),
    mapFilename: d.mapFilename,
    mapBuildId: new Int32Array(d.mapFilename.length),
  };
}

export interface OtlpProfilesResult {
  rows: ProfileRow[];
  /** Number of Profile messages decoded. */
  profiles: number;
  /** Number of samples across them. */
  samples: number;
}

/** Decodes ExportProfilesServiceRequest (or ProfilesData, same field numbers) bytes into rows. */
export function otlpProfilesToRows(bytes: Uint8Array, opts: OtlpProfilesOptions = {}): OtlpProfilesResult {
  const w = new Wire(bytes, 0, bytes.length, 'OTLP ExportProfilesServiceRequest', { left: opts.maxItems ?? 16_000_000 });
  const resources: Wire[] = [];
  let dictionary: Dictionary | null = null;
  while (w.pos < w.end) {
    const [f, wt] = w.tag();
    if (f === 1) {
      w.expect(wt, 2, 'resource_profiles');
      resources.push(w.sub());
    } else if (f === 2) {
      w.expect(wt, 2, 'dictionary');
      dictionary = readDictionary(w.sub());
    } else w.skip(wt);
  }
  const d = dictionary ?? readDictionary(new Wire(new Uint8Array(0)));
  const nStr = d.strOff.length;
  const keyIdx = { trace: nStr + d.extra.push('trace_id') - 1, span: nStr + d.extra.push('span_id') - 1 };
  const rows: ProfileRow[] = [];
  let profiles = 0;
  let samples = 0;
  for (const rw of resources) {
    const attributes: Record<string, string | number | boolean> = {};
    const scopes: { name: string; profiles: RawProfile[] }[] = [];
    while (rw.pos < rw.end) {
      const [f, wt] = rw.tag();
      if (f === 1 && wt === 2) {
        const r = rw.sub();
        while (r.pos < r.end) {
          const [rf, rwt] = r.tag();
          if (rf === 1 && rwt === 2) {
            const [k, v] = readKeyValue(r.sub());
            if (k && v !== null) attributes[k] = v;
          } else r.skip(rwt);
        }
      } else if (f === 2 && wt === 2) {
        const sw = rw.sub();
        const scope = { name: '', profiles: [] as RawProfile[] };
        while (sw.pos < sw.end) {
          const [sf, swt] = sw.tag();
          if (sf === 1 && swt === 2) {
            const sc = sw.sub();
            while (sc.pos < sc.end) {
              const [cf, cwt] = sc.tag();
              if (cf === 1 && cwt === 2) scope.name = sc.string();
              else sc.skip(cwt);
            }
          } else if (sf === 2 && swt === 2) scope.profiles.push(readProfile(sw.sub()));
          else sw.skip(swt);
        }
        scopes.push(scope);
      } else rw.skip(wt);
    }
    const svc = attributes['service.name'];
    const service = typeof svc === 'string' && svc ? svc : (opts.defaultService ?? 'unknown_service');
    for (const scope of scopes) {
      for (const p of scope.profiles) {
        profiles++;
        samples += p.samples.length;
        const attrs = { ...attributes };
        for (const ai of p.attrs) {
          if (ai > 0 && ai < d.attrKey.length) attrs[stringAt(bytes, d, d.attrKey[ai]!)] = d.attrValue[ai]!;
        }
        if (scope.name) attrs['otel.scope.name'] = scope.name;
        const decoded = toDecoded(bytes, d, p, keyIdx);
        const out = pprofToRows(decoded, {
          service,
          attributes: attrs,
          countToTime: true,
          source: 'otlp',
          profileId: p.profileId,
          ...(opts.nowUs ? { nowUs: opts.nowUs } : {}),
        });
        for (const r of out) rows.push(r);
      }
    }
  }
  return { rows, profiles, samples };
}

function stringAt(bytes: Uint8Array, d: Dictionary, i: number): string {
  if (i < d.strOff.length) return utf8.decode(bytes.subarray(d.strOff[i]!, d.strOff[i]! + d.strLen[i]!));
  return d.extra[i - d.strOff.length] ?? '';
}
