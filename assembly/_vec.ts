// Growable vectors over unmanaged memory (heap.alloc/realloc), shared by the WASM decoders (pprof, spans).
// They live for the whole instance and are reset (not freed) between decodes, so a warm decoder
// allocates nothing: JS copies the contents out after each decode (see src/pipeline/decode/profiles/wasm.ts).

export class Vec {
  ptr: usize = 0;
  len: i32 = 0;
  cap: i32 = 0;
  /** log2 of the element size in bytes (2 for 32-bit, 3 for 64-bit elements). */
  shift: i32;

  constructor(shift: i32) {
    this.shift = shift;
  }

  @inline reset(): void {
    this.len = 0;
  }

  reserve(n: i32): void {
    if (n <= this.cap) return;
    let c = this.cap < 16 ? 16 : this.cap;
    while (c < n) c = c << 1;
    const bytes = <usize>c << this.shift;
    this.ptr = this.ptr == 0 ? heap.alloc(bytes) : heap.realloc(this.ptr, bytes);
    this.cap = c;
  }

  @inline push32(v: i32): void {
    if (this.len == this.cap) this.reserve(this.len + 1);
    store<i32>(this.ptr + (<usize>this.len << 2), v);
    this.len++;
  }

  @inline push64(v: i64): void {
    if (this.len == this.cap) this.reserve(this.len + 1);
    store<i64>(this.ptr + (<usize>this.len << 3), v);
    this.len++;
  }

  @inline pushF64(v: f64): void {
    if (this.len == this.cap) this.reserve(this.len + 1);
    store<f64>(this.ptr + (<usize>this.len << 3), v);
    this.len++;
  }

  @inline get32(i: i32): i32 {
    return load<i32>(this.ptr + (<usize>i << 2));
  }

  @inline set32(i: i32, v: i32): void {
    store<i32>(this.ptr + (<usize>i << 2), v);
  }

  @inline get64(i: i32): i64 {
    return load<i64>(this.ptr + (<usize>i << 3));
  }

  @inline getF64(i: i32): f64 {
    return load<f64>(this.ptr + (<usize>i << 3));
  }

  @inline setF64(i: i32, v: f64): void {
    store<f64>(this.ptr + (<usize>i << 3), v);
  }

  /** Sets the length to n (reserving), filling new 32-bit slots with `fill`. */
  fill32(n: i32, fill: i32): void {
    this.reserve(n);
    for (let i = 0; i < n; i++) store<i32>(this.ptr + (<usize>i << 2), fill);
    this.len = n;
  }

  fillF64(n: i32, fill: f64): void {
    this.reserve(n);
    for (let i = 0; i < n; i++) store<f64>(this.ptr + (<usize>i << 3), fill);
    this.len = n;
  }

  /** Drops the buffer when it grew past `maxBytes`, so one huge profile does not pin its memory forever. */
  trim(maxBytes: usize): void {
    if ((<usize>this.cap << this.shift) > maxBytes) {
      heap.free(this.ptr);
      this.ptr = 0;
      this.cap = 0;
      this.len = 0;
    }
  }
}
