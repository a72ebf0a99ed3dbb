// Turning an ingest body into profile.proto bytes: gzip with a hard cap on the decompressed size
// (a gzip bomb stops at the cap, it is never inflated in full), and sniffing of the formats we
// refuse with a hint (legacy text/binary pprof, collapsed stacks, JFR).
import { gunzipCapped, DecodeError } from '../decode-error.js';

/** Default cap on a decompressed profile (the ingest body limit of DESIGN.md: 20 MiB after decompression). */
export const DEFAULT_MAX_DECOMPRESSED = 20 << 20;

export function isGzip(b: Uint8Array): boolean {
  return b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;
}

/** Gunzips when the bytes are gzip (magic 1f 8b), else returns them; refuses output past `max` bytes. */
export function maybeGunzip(b: Uint8Array, max = DEFAULT_MAX_DECOMPRESSED): Uint8Array {
  if (!isGzip(b)) {
    if (b.length > max) throw tooLarge(max);
    return b;
  }
  return gunzipCapped(b, max, 'profile');
}

function tooLarge(max: number): DecodeError {
  return new DecodeError('TOO_LARGE', `profile exceeds ${max} bytes after decompression`, 'send smaller profiles or raise the ingest limit');
}

/**
 * Refuses what is not a profile.proto message but is recognisably another profile format. Called on
 * the decompressed bytes, before decoding. Anything else that is not protobuf fails later as MALFORMED.
 */
export function refuseNonProtobuf(b: Uint8Array): void {
  if (b.length === 0) throw new DecodeError('EMPTY', 'empty profile', 'the body carried no profile bytes');
  // Legacy binary CPU profile (gperftools / old Go): header words 0, 3, 0, period, 0 — 32 or 64 bit.
  if (b.length >= 16) {
    const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
    const w32 = dv.getUint32(0, true) === 0 && dv.getUint32(4, true) === 3;
    const w64 = b.length >= 24 && dv.getBigUint64(0, true) === 0n && dv.getBigUint64(8, true) === 3n;
    if (w32 || w64) {
      throw new DecodeError(
        'LEGACY_FORMAT',
        'legacy binary CPU profile (gperftools format) is not supported',
        'convert it to profile.proto first: `go tool pprof -proto <file> > profile.pb.gz`',
      );
    }
  }
  if (b[0] === 0x46 && b[1] === 0x4c && b[2] === 0x52 && b[3] === 0x00) {
    throw new DecodeError('LEGACY_FORMAT', 'JFR recordings are not supported', 'send pprof (format=pprof); convert JFR with `jfr2pprof` or async-profiler');
  }
  if (looksLikeText(b)) {
    const head = new TextDecoder().decode(b.subarray(0, Math.min(b.length, 64)));
    let what = 'a text profile format';
    if (head.startsWith('--- ')) what = 'a legacy text pprof profile (' + head.split('\n')[0]!.trim() + ')';
    else if (/^(heap|growth|goroutine|threadcreation) profile:/.test(head) || head.startsWith('heap_v2/')) what = 'a legacy text Go profile';
    else if (head.startsWith('PeriodType:')) what = 'a pprof text dump';
    else if (/^[^\n]*;[^\n]* \d+\s*$/m.test(head) || /^\S+ \d+\s*$/m.test(head)) what = 'collapsed (folded) stacks';
    else if (head.startsWith('{') || head.startsWith('[')) what = 'JSON';
    throw new DecodeError(
      'LEGACY_FORMAT',
      `body is ${what}, not a pprof protobuf`,
      'send profile.proto bytes (optionally gzip-compressed) with format=pprof; convert legacy profiles with `go tool pprof -proto`',
    );
  }
}

/** True when the first bytes are all printable ASCII or whitespace (no protobuf starts like that). */
function looksLikeText(b: Uint8Array): boolean {
  const n = Math.min(b.length, 256);
  for (let i = 0; i < n; i++) {
    const c = b[i]!;
    if (c === 0x09 || c === 0x0a || c === 0x0d) continue;
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

/** Decompression + sniffing in one call: the profile.proto bytes of an ingest body. */
export function profileBytes(body: Uint8Array, maxDecompressed = DEFAULT_MAX_DECOMPRESSED): Uint8Array {
  if (body.length === 0) throw new DecodeError('EMPTY', 'empty profile body', 'the request carried no profile bytes');
  const b = maybeGunzip(body, maxDecompressed);
  refuseNonProtobuf(b);
  return b;
}
