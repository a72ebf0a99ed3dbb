// The input buffer of a WASM decoder (pprof, spans): JS asks for it with inputPtr(len), writes the
// bytes there and calls the decoder. Allocated once, grown on demand, reused across calls.

/** The buffer's address: the current input starts here. */
export let inPtr: usize = 0;
let inCap: i32 = 0;

/** Returns a buffer of at least `len` bytes for the next input; reused across calls. */
export function inputPtr(len: i32): usize {
  if (len > inCap) {
    if (inPtr != 0) heap.free(inPtr);
    inCap = len < 4096 ? 4096 : len;
    inPtr = heap.alloc(<usize>inCap);
  }
  return inPtr;
}

