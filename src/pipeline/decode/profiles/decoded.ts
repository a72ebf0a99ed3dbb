// The flat form of a decoded pprof profile: what both decoders (WASM in assembly/pprof.ts and the
// TypeScript twin in reference.ts) produce, and what rows.ts turns into svc_profiles rows.
// Every cross-reference is already resolved from pprof ids to 0-based indices. Strings are not
// decoded: they are (offset, length) pairs into `bytes`, read lazily by StringReader.
import { DecodeError } from '../decode-error.js';

export interface DecodedPprof {
  /** The profile bytes the string offsets point into (kept, not copied). */
  bytes: Uint8Array;
  strOff: Uint32Array;
  strLen: Uint32Array;
  /** sample_type as (type, unit) string-index pairs. */
  sampleTypes: Int32Array;
  /** Values per sample: max(#sample types, most values on any sample); shorter samples pad with 0. */
  valuesPerSample: number;
  timeNanos: bigint;
  durationNanos: bigint;
  period: bigint;
  periodType: number;
  periodUnit: number;
  defaultSampleType: number;
  dropFrames: number;
  keepFrames: number;
  /** Samples: nSamples + 1 offsets into sampleLoc / label arrays. */
  sampleLocStart: Uint32Array;
  /** Location index per frame, leaf first (pprof order). */
  sampleLoc: Int32Array;
  /** nSamples × valuesPerSample, int64 values as doubles (exact below 2^53). */
  values: Float64Array;
  sampleLabStart: Uint32Array;
  labKey: Int32Array;
  labStr: Int32Array;
  labNum: Float64Array;
  labNumUnit: Int32Array;
  locId: Float64Array;
  /** Mapping index, or -1. */
  locMapping: Int32Array;
  locAddr: BigUint64Array;
  /** nLocations + 1 offsets into the line arrays. */
  locLineStart: Uint32Array;
  /** Function index per line, or -1; a location's first line is the innermost (inlined leaf) frame. */
  lineFunc: Int32Array;
  lineNo: Float64Array;
  fnId: Float64Array;
  fnName: Int32Array;
  fnSystemName: Int32Array;
  fnFilename: Int32Array;
  fnStartLine: Float64Array;
  mapId: Float64Array;
  mapFilename: Int32Array;
  mapBuildId: Int32Array;
  /**
   * Strings that are not in the byte-backed table (OTLP attribute values, hex ids): index
   * strOff.length + i reads extraStrings[i]. Absent for pprof.
   */
  extraStrings?: string[];
}

/** Output slots of assembly/pprof.ts (outPtr/outLen), in DecodedPprof terms. */
export const OUT = {
  strOff: 0,
  strLen: 1,
  sampleTypes: 2,
  sampleLocStart: 3,
  sampleLoc: 4,
  values: 5,
  sampleLabStart: 6,
  labKey: 7,
  labStr: 8,
  labNum: 9,
  labNumUnit: 10,
  locId: 11,
  locMapping: 12,
  locAddr: 13,
  locLineStart: 14,
  lineFunc: 15,
  lineNo: 16,
  fnId: 17,
  fnName: 18,
  fnSystemName: 19,
  fnFilename: 20,
  fnStartLine: 21,
  mapId: 22,
  mapFilename: 23,
  mapBuildId: 24,
} as const;

/** Decoder result codes, shared by both decoders. */
export const DECODE_ERRORS: Record<number, string> = {
  1: 'truncated field (a varint or fixed-width value runs past the end)',
  2: 'varint longer than 10 bytes',
  3: 'declared length runs past the end of its message',
  4: 'invalid wire type or field number',
  5: 'duplicate or zero location/function/mapping id',
  6: 'a sample references an undefined location id',
  7: 'a line references an undefined function id',
  8: 'string index past the end of the string table',
  9: 'too many elements',
};

export const ERR_TOO_MANY_ITEMS = 9;

/** Default bound on decoded elements (strings + samples + values + location ids + labels + locations + lines + functions). */
export const DEFAULT_MAX_ITEMS = 16_000_000;

export function decodeFailure(code: number, offset: number): DecodeError {
  const what = DECODE_ERRORS[code] ?? `error ${code}`;
  if (code === ERR_TOO_MANY_ITEMS) {
    return new DecodeError('TOO_LARGE', `pprof profile has too many elements`, 'split the profile or raise the ingest limit');
  }
  const at = offset >= 0 ? ` at byte ${offset}` : '';
  return new DecodeError('MALFORMED', `malformed pprof protobuf: ${what}${at}`, 'send a pprof profile.proto message, optionally gzip-compressed');
}

export interface PprofDecoder {
  readonly name: string;
  /** Decodes uncompressed profile.proto bytes; throws DecodeError. */
  decode(bytes: Uint8Array, maxItems?: number): DecodedPprof;
}

export function sampleCount(d: DecodedPprof): number {
  return d.sampleLocStart.length === 0 ? 0 : d.sampleLocStart.length - 1;
}

const utf8 = new TextDecoder('utf-8');

/** Lazily decoded, cached strings of one profile. */
export class StringReader {
  private readonly cache: (string | undefined)[];
  constructor(private readonly d: DecodedPprof) {
    this.cache = new Array(d.strOff.length + (d.extraStrings?.length ?? 0));
  }

  get(i: number): string {
    if (i < 0) return '';
    let s = this.cache[i];
    if (s !== undefined) return s;
    const n = this.d.strOff.length;
    if (i >= n) {
      s = this.d.extraStrings?.[i - n] ?? '';
    } else {
      const off = this.d.strOff[i]!;
      const len = this.d.strLen[i]!;
      s = len === 0 ? '' : asciiOrUtf8(this.d.bytes, off, len);
    }
    this.cache[i] = s;
    return s;
  }
}

/** Short ASCII strings via fromCharCode (no TextDecoder call overhead), anything else via TextDecoder. */
function asciiOrUtf8(b: Uint8Array, off: number, len: number): string {
  if (len <= 64) {
    let ascii = true;
    for (let i = off; i < off + len; i++) if (b[i]! >= 0x80) { ascii = false; break; }
    if (ascii) return String.fromCharCode.apply(null, b.subarray(off, off + len) as unknown as number[]);
  }
  return utf8.decode(b.subarray(off, off + len));
}
