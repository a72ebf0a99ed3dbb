// The JSON output buffers of the protobuf decoders. Attribute, event, link and exemplar JSON is
// written as bytes straight from the input (keys and string values are copied with JSON escaping,
// never decoded to JS strings), then turned into one flat string per column value with a single
// native slice.
import { ByteSink } from '../../../store/byte-sink.js';
import { B } from './proto-wire.js';

export class Out extends ByteSink {
  nonAscii = false;

  reset(): void {
    this.n = 0;
    this.nonAscii = false;
  }

  /** Gives back memory after an unusually large record. */
  trim(): void {
    this.shrink();
    this.reset();
  }

  /** Appends an ASCII-only string (digits, literals, base64, hex). */
  ascii(s: string): void {
    const k = s.length;
    this.ensure(k);
    const b = this.b;
    let n = this.n;
    for (let i = 0; i < k; i++) b[n++] = s.charCodeAt(i);
    this.n = n;
  }

  /** Appends pre-encoded ASCII bytes (see lit()). */
  lit(x: Uint8Array): void {
    const k = x.length;
    this.ensure(k);
    const b = this.b;
    let n = this.n;
    for (let i = 0; i < k; i++) b[n++] = x[i]!;
    this.n = n;
  }

  /** Comma unless the last byte opened an object or array. */
  sep(): void {
    const last = this.b[this.n - 1];
    if (last !== 0x7b && last !== 0x5b) this.byte(0x2c);
  }

  /** Input bytes [s, e) as a JSON string literal (UTF-8 copied through; escapes as JSON.stringify). */
  jsonStr(s: number, e: number): void {
    this.ensure(e - s + 2);
    let b = this.b;
    let n = this.n;
    let any = 0;
    b[n++] = 0x22;
    for (let i = s; i < e; i++) {
      const c = B[i]!;
      any |= c;
      if (ESC[c] === 0) b[n++] = c;
      else {
        // An escape takes up to 6 bytes: make room for it and the rest of the string.
        this.n = n;
        this.ensure(e - i + 7);
        b = this.b;
        b[n++] = 0x5c;
        const x = ESC[c]!;
        if (x !== 0x75) b[n++] = x;
        else {
          b[n++] = 0x75; b[n++] = 0x30; b[n++] = 0x30;
          b[n++] = HEXC[c >> 4]!; b[n++] = HEXC[c & 15]!;
        }
      }
    }
    b[n++] = 0x22;
    if (any >= 0x80) this.nonAscii = true;
    this.n = n;
  }

  /** Input bytes [s, e) as lower-case hex in quotes, or null when empty. */
  hexOrNull(s: number, e: number): void {
    if (s === e) return this.lit(L_NULL);
    this.ensure((e - s) * 2 + 2);
    const b = this.b;
    let n = this.n;
    b[n++] = 0x22;
    for (let i = s; i < e; i++) {
      const c = B[i]!;
      b[n++] = HEXC[c >> 4]!;
      b[n++] = HEXC[c & 15]!;
    }
    b[n++] = 0x22;
    this.n = n;
  }

  /** The text written since `from`. */
  text(from: number): string {
    return this.nonAscii ? this.b.utf8Slice(from, this.n) : this.b.latin1Slice(from, this.n);
  }
}

/** An ASCII literal as bytes, for Out.lit. */
export const lit = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));
export const L_NULL = lit('null');
export const L_TRUE = lit('true');
export const L_FALSE = lit('false');
const HEXC = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
/** JSON escape of each byte: 0 = copy as is; else the character after the backslash ('u' = \u00XX). */
const ESC = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) ESC[c] = 0x75;
ESC[0x08] = 0x62;
ESC[0x0c] = 0x66;
ESC[0x0a] = 0x6e;
ESC[0x0d] = 0x72;
ESC[0x09] = 0x74;
ESC[0x22] = 0x22;
ESC[0x5c] = 0x5c;

export const A = new Out(8192, 1 << 20); // attributes of the current record
export const E = new Out(8192, 1 << 20); // events of the current span / exemplars of the current point
export const L = new Out(8192, 1 << 20); // links of the current span
export const R = new Out(8192, 1 << 20); // resource attributes
export const V = new Out(8192, 1 << 20); // log bodies

/** Gives back memory after an unusually large record (called when a decode ends). */
export function trimOutputs(): void {
  A.trim();
  E.trim();
  L.trim();
  R.trim();
  V.trim();
}
