// id → index lookup for pprof's location/function/mapping ids. Real profiles number their ids
// 1..n (Go, pprof-nodejs, pyroscope), so a dense table is the common case; anything sparser falls
// back to open addressing. Both are rebuilt per decode into reused buffers.
import { Vec } from './_vec';

export class IdMap {
  dense: Vec = new Vec(2);
  keys: Vec = new Vec(3);
  vals: Vec = new Vec(2);
  isDense: bool = true;
  mask: i32 = 0;
  denseLen: i32 = 0;

  /** Indexes ids[0..n). Returns false when an id repeats (or is 0, which pprof reserves for "none"). */
  build(ids: Vec, n: i32): bool {
    let maxId: u64 = 0;
    for (let i = 0; i < n; i++) {
      const id = <u64>ids.get64(i);
      if (id == 0) return false;
      if (id > maxId) maxId = id;
    }
    if (maxId <= <u64>n * 4 + 1024) {
      this.isDense = true;
      const len = <i32>maxId + 1;
      this.dense.fill32(len, -1);
      this.denseLen = len;
      for (let i = 0; i < n; i++) {
        const id = <i32>ids.get64(i);
        if (this.dense.get32(id) != -1) return false;
        this.dense.set32(id, i);
      }
      return true;
    }
    this.isDense = false;
    let cap = 16;
    while (cap < n * 2) cap <<= 1;
    this.mask = cap - 1;
    this.keys.reserve(cap);
    this.keys.len = cap;
    this.vals.fill32(cap, -1);
    for (let i = 0; i < n; i++) {
      const id = ids.get64(i);
      let h = hash(id) & this.mask;
      while (true) {
        const v = this.vals.get32(h);
        if (v == -1) {
          store<i64>(this.keys.ptr + (<usize>h << 3), id);
          this.vals.set32(h, i);
          break;
        }
        if (load<i64>(this.keys.ptr + (<usize>h << 3)) == id) return false;
        h = (h + 1) & this.mask;
      }
    }
    return true;
  }

  /** Index of `id`, or -1. */
  get(id: u64): i32 {
    if (this.isDense) {
      if (id >= <u64>this.denseLen) return -1;
      return this.dense.get32(<i32>id);
    }
    let h = hash(<i64>id) & this.mask;
    while (true) {
      const v = this.vals.get32(h);
      if (v == -1) return -1;
      if (load<i64>(this.keys.ptr + (<usize>h << 3)) == <i64>id) return v;
      h = (h + 1) & this.mask;
    }
  }

  trim(maxBytes: usize): void {
    this.dense.trim(maxBytes);
    this.keys.trim(maxBytes);
    this.vals.trim(maxBytes);
  }
}

@inline function hash(id: i64): i32 {
  const x = <u64>id * 0x9e3779b97f4a7c15;
  return <i32>(x >> 32);
}
