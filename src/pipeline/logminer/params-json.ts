// The text of a line's parameters as svc_logs.template_params stores it (a JSON array of strings),
// written from the engine's bytes into one reused buffer, so a line costs one string, not a string a
// value, an array and JSON.stringify.
import { CsvSink } from '../../store/csv.js';

/** The JSON text of a batch's parameters (mineBatch's paramsJson), reused across batches. */
export const jsonSink = new CsvSink(1 << 16, 1 << 22);

/** JSON's own escapes of the control characters (JSON.stringify's), by code; the rest are \u00XX. */
const SHORT_ESCAPES: Record<number, number> = { 8: 0x62, 9: 0x74, 10: 0x6e, 12: 0x66, 13: 0x72 };
const HEX = '0123456789abcdef';

/**
 * Writes `src[s, s + len)` as a JSON string (quotes included) when every byte is ASCII, escaped as
 * JSON.stringify escapes it; else writes nothing and returns false. Such a value decodes to the same
 * characters, one a byte, so the first `len` bytes are the first `len` characters.
 */
export function writeJsonAscii(out: CsvSink, src: Uint8Array, s: number, len: number): boolean {
  const end = s + len;
  for (let i = s; i < end; i++) if (src[i]! >= 0x80) return false;
  out.ensure(len * 6 + 2);
  const b = out.b;
  let n = out.n;
  b[n++] = 0x22;
  for (let i = s; i < end; i++) {
    const c = src[i]!;
    if (c >= 0x20 && c !== 0x22 && c !== 0x5c) b[n++] = c;
    else if (c === 0x22 || c === 0x5c) {
      b[n++] = 0x5c;
      b[n++] = c;
    } else if (SHORT_ESCAPES[c] !== undefined) {
      b[n++] = 0x5c;
      b[n++] = SHORT_ESCAPES[c]!;
    } else {
      b[n++] = 0x5c;
      b[n++] = 0x75;
      b[n++] = 0x30;
      b[n++] = 0x30;
      b[n++] = HEX.charCodeAt(c >> 4);
      b[n++] = HEX.charCodeAt(c & 15);
    }
  }
  b[n++] = 0x22;
  out.n = n;
  return true;
}
