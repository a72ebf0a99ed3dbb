// A growable byte buffer that the ingest hot paths write into without making strings: the CSV
// encoder (store/csv.ts) writes every cell into one, and the protobuf decoder writes attribute,
// event and link JSON into them (pipeline/decode/otlp/proto-decode.ts).

/** Buffer's own UTF-8/latin1 methods, which `write`/`toString` call after their argument checks. */
export interface NodeBuffer extends Buffer {
  utf8Write(s: string, offset: number): number;
  utf8Slice(start: number, end: number): string;
  latin1Slice(start: number, end: number): string;
  base64Slice(start: number, end: number): string;
}

const alloc = (n: number) => Buffer.allocUnsafe(n) as NodeBuffer;

export class ByteSink {
  b: NodeBuffer;
  n = 0;
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
    // Above 10^8 (timestamps in µs have 16 digits) the low eight digits are written with int32
    // arithmetic, the rest by the loop: a division of a double a digit was 3% of log ingest's thread.
    let low = -1;
    if (v >= 1e8) {
      const hi = Math.floor(v / 1e8);
      low = v - hi * 1e8;
      v = hi;
    }
    let d = 1;
    for (let x = v; x >= 10; x = Math.floor(x / 10)) d++;
    let k = (n = n + d);
    while (v >= 10) {
      const q = Math.floor(v / 10);
      b[--k] = 48 + (v - q * 10);
      v = q;
    }
    b[--k] = 48 + v;
    if (low >= 0) {
      for (let j = n + 7; j >= n; j--) {
        const q = (low / 10) | 0;
        b[j] = 48 + (low - q * 10);
        low = q;
      }
      n += 8;
    }
    this.n = n;
  }

  /** Gives back memory after an unusually large record or batch. */
  shrink(): void {
    if (this.b.length > this.keepMax) this.b = alloc(this.initial);
  }
}
