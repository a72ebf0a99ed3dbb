// A growable byte buffer that the ingest hot paths write into without making strings: the CSV
// encoder (store/csv.ts) writes every cell into one, and the protobuf decoder writes attribute,
// event and link JSON into them (pipeline/decode/otlp/proto-json-out.ts).

/** Buffer's own UTF-8/latin1 methods, which `write`/`toString` call after their argument checks. */
export interface NodeBuffer extends Buffer {
  utf8Write(s: string, offset: number): number;
  utf8Slice(start: number, end: number): string;
  latin1Slice(start: number, end: number): string;
  base64Slice(start: number, end: number): string;
}

const alloc = (n: number) => Buffer.allocUnsafe(n) as NodeBuffer;

/** '00' … '99' as ASCII byte pairs. */
const PAIRS = Uint8Array.from({ length: 200 }, (_v, i) => 48 + (i & 1 ? (i >> 1) % 10 : Math.floor((i >> 1) / 10)));

export class ByteSink {
  b: NodeBuffer;
  n = 0;
  /** decimal(): the digits above 10^8 of the last number that had any, and that number's high part. */
  private lastHi = -1;
  private hiDigits = '';
  private readonly initial: number;
  private readonly keepMax: number;

  /** Starts at `initial` bytes; shrink() gives back a buffer that grew beyond `keepMax`. */
  constructor(initial: number, keepMax: number) {
    this.initial = initial;
    this.keepMax = keepMax;
    this.b = alloc(initial);
  }

  /** Makes room for `k` more bytes. */
  ensure(k: number): void {
    if (this.n + k <= this.b.length) return;
    let size = this.b.length * 2;
    while (size < this.n + k) size *= 2;
    const nb = alloc(size);
    nb.set(this.b.subarray(0, this.n));
    this.b = nb;
  }

  byte(c: number): void {
    if (this.n >= this.b.length) this.ensure(1);
    this.b[this.n++] = c;
  }

  /** Appends a safe integer in ASCII decimal. */
  decimal(v: number): void {
    this.ensure(17);
    const b = this.b;
    let n = this.n;
    if (v < 0) {
      b[n++] = 0x2d;
      v = -v;
    }
    if (v >= 1e8) {
      // Timestamps in µs (16 digits): the digits above 10^8 (100 s) repeat from one row to the next,
      // so they are copied from the last such number; the low eight are written two at a time in
      // int32 arithmetic: a division of a double a digit shows in log ingest's profile.
      const hi = Math.floor(v / 1e8);
      let low = v - hi * 1e8;
      if (hi !== this.lastHi) {
        this.lastHi = hi;
        this.hiDigits = String(hi);
      }
      const hd = this.hiDigits;
      for (let i = 0; i < hd.length; i++) b[n++] = hd.charCodeAt(i);
      for (let j = n + 6; j >= n; j -= 2) {
        const q = (low / 100) | 0;
        const r = (low - q * 100) << 1;
        b[j] = PAIRS[r]!;
        b[j + 1] = PAIRS[r + 1]!;
        low = q;
      }
      this.n = n + 8;
      return;
    }
    let d = 1;
    for (let x = v; x >= 10; x = Math.floor(x / 10)) d++;
    let k = (this.n = n + d);
    while (v >= 10) {
      const q = Math.floor(v / 10);
      b[--k] = 48 + (v - q * 10);
      v = q;
    }
    b[--k] = 48 + v;
  }

  /** Gives back memory after an unusually large record or batch. */
  shrink(): void {
    if (this.b.length > this.keepMax) this.b = alloc(this.initial);
  }
}
