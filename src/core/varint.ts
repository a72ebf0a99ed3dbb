// Protobuf base-128 varints, written (the encoders of small messages: export responses, replayed
// requests). A negative value is its 64-bit two's complement, as protobuf writes int64.

/** Appends `v` to `out` as a varint. */
export function pushVarint(out: number[], v: number | bigint): void {
  let x = BigInt.asUintN(64, BigInt(v));
  while (x >= 0x80n) {
    out.push(Number(x & 0x7fn) | 0x80);
    x >>= 7n;
  }
  out.push(Number(x));
}
