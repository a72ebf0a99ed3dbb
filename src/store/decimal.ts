// Safe integers as ASCII decimal, written into a byte buffer without making a string: used by the
// CSV encoder and by the protobuf decoder's JSON output, both per cell on the ingest hot path.

/** Writes safe integer `v` at `n` (the caller leaves room for 17 bytes); returns the end offset. */
export function writeDecimal(b: Uint8Array, n: number, v: number): number {
  if (v < 0) {
    b[n++] = 0x2d;
    v = -v;
  }
  let d = 1;
  for (let x = v; x >= 10; x = Math.floor(x / 10)) d++;
  const end = n + d;
  let k = end;
  while (v >= 10) {
    const q = Math.floor(v / 10);
    b[--k] = 48 + (v - q * 10);
    v = q;
  }
  b[--k] = 48 + v;
  return end;
}
