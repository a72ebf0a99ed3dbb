// A minimal protobuf wire reader for the small envelopes around profiles (Pyroscope push.v1,
// OTLP ExportProfilesServiceRequest). Every read is bounds-checked and failures throw
// DecodeError('MALFORMED'); nothing recurses on the input's structure, so nesting depth
// cannot exhaust the stack. pprof itself is decoded by assembly/pprof.ts or reference.ts.
import { DecodeError } from '../decode-error.js';

const TWO32 = 4294967296;

export class Wire {
  pos: number;
  end: number;
  lo = 0;
  hi = 0;

  /**
   * Elements left before TOO_LARGE, shared with sub-readers: repeated integers and submessages
   * each take one, so a small body cannot expand into an unbounded number of JS values.
   */
  budget: { left: number };

  constructor(readonly b: Uint8Array, start = 0, end = b.length, readonly what = 'protobuf', budget?: { left: number }) {
    this.pos = start;
    this.end = end;
    this.budget = budget ?? { left: 16_000_000 };
  }

  private spend(): void {
    if (--this.budget.left < 0) {
      throw new DecodeError('TOO_LARGE', `${this.what} has too many elements`, 'send smaller batches');
    }
  }

  fail(msg: string): never {
    throw new DecodeError('MALFORMED', `malformed ${this.what}: ${msg} at byte ${this.pos}`, `send a valid ${this.what} message`);
  }

  varintParts(): void {
    const b = this.b;
    let p = this.pos;
    let lo = 0;
    let hi = 0;
    for (let shift = 0; ; shift += 7) {
      if (shift >= 70) this.fail('varint longer than 10 bytes');
      if (p >= this.end) this.fail('truncated varint');
      const c = b[p++]!;
      const bits = c & 0x7f;
      if (shift < 28) lo |= bits << shift;
      else if (shift === 28) {
        lo |= (bits & 0x0f) << 28;
        hi |= bits >>> 4;
      } else if (shift < 64) hi |= bits << (shift - 32);
      if (c < 0x80) break;
    }
    this.lo = lo >>> 0;
    this.hi = hi >>> 0;
    this.pos = p;
  }

  /** Unsigned varint as a double (exact below 2^53). */
  uint(): number {
    this.varintParts();
    return this.hi * TWO32 + this.lo;
  }

  /** int64 varint as a double. */
  int(): number {
    this.varintParts();
    return this.hi >= 0x80000000 ? (this.hi - TWO32) * TWO32 + this.lo : this.hi * TWO32 + this.lo;
  }

  fixed64(): bigint {
    if (this.end - this.pos < 8) this.fail('truncated fixed64');
    const v = new DataView(this.b.buffer, this.b.byteOffset + this.pos, 8).getBigUint64(0, true);
    this.pos += 8;
    return v;
  }

  double(): number {
    if (this.end - this.pos < 8) this.fail('truncated double');
    const v = new DataView(this.b.buffer, this.b.byteOffset + this.pos, 8).getFloat64(0, true);
    this.pos += 8;
    return v;
  }

  /** Reads a length prefix, checks it, returns [start, end) and moves past it. */
  bytesRange(): [number, number] {
    const len = this.uint();
    if (len > this.end - this.pos) this.fail('length runs past the end of the message');
    const s = this.pos;
    this.pos += len;
    return [s, this.pos];
  }

  bytes(): Uint8Array {
    const [s, e] = this.bytesRange();
    return this.b.subarray(s, e);
  }

  string(): string {
    return utf8.decode(this.bytes());
  }

  /** A sub-reader over the next length-delimited field. */
  sub(): Wire {
    const [s, e] = this.bytesRange();
    this.spend();
    return new Wire(this.b, s, e, this.what, this.budget);
  }

  /** Returns [field, wireType]. */
  tag(): [number, number] {
    this.varintParts();
    const f = this.hi * 0x20000000 + (this.lo >>> 3);
    if (f === 0) this.fail('field number 0');
    return [f, this.lo & 7];
  }

  skip(wt: number): void {
    if (wt === 0) this.varintParts();
    else if (wt === 2) this.bytesRange();
    else if (wt === 1 || wt === 5) {
      const n = wt === 1 ? 8 : 4;
      if (this.end - this.pos < n) this.fail('truncated fixed field');
      this.pos += n;
    } else this.fail(`unsupported wire type ${wt}`);
  }

  expect(wt: number, want: number, field: string): void {
    if (wt !== want) this.fail(`wrong wire type ${wt} for ${field}`);
  }

  /** Repeated integer field, packed (wire type 2) or not (0). */
  ints(wt: number, into: number[], signed = false): void {
    if (wt === 2) {
      const w = this.sub();
      while (w.pos < w.end) {
        this.spend();
        into.push(signed ? w.int() : w.uint());
      }
    } else if (wt === 0) {
      this.spend();
      into.push(signed ? this.int() : this.uint());
    }
    else this.fail(`wrong wire type ${wt} for a repeated integer`);
  }

  /** Repeated fixed64 field, packed or not. */
  fixed64s(wt: number, into: bigint[]): void {
    if (wt === 2) {
      const w = this.sub();
      if ((w.end - w.pos) % 8 !== 0) this.fail('packed fixed64 length not a multiple of 8');
      while (w.pos < w.end) {
        this.spend();
        into.push(w.fixed64());
      }
    } else if (wt === 1) {
      this.spend();
      into.push(this.fixed64());
    }
    else this.fail(`wrong wire type ${wt} for a repeated fixed64`);
  }
}

export const utf8 = new TextDecoder('utf-8');

export function hex(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < b.length; i++) s += (b[i]! < 16 ? '0' : '') + b[i]!.toString(16);
  return s;
}
