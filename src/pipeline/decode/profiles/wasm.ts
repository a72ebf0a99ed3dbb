// The WASM pprof decoder (assembly/pprof.ts) behind the PprofDecoder interface.
//
// Ownership across the boundary: the module owns one input buffer (inputPtr, grown on demand) and
// its output vectors; we copy the input in, call decode, and copy every output out with
// TypedArray.slice before returning, so the returned DecodedPprof never aliases WASM memory and the
// next call can reuse the buffers. An abort (only possible on out-of-memory) poisons the instance,
// so it is dropped and the next call instantiates a fresh one.
import { instantiateWasm, type AsRuntime } from '../../../compute/wasm.js';
import { DEFAULT_MAX_ITEMS, OUT, decodeFailure, type DecodedPprof, type PprofDecoder } from './decoded.js';
import { DecodeError } from '../decode-error.js';

interface PprofExports {
  inputPtr(len: number): number;
  decode(len: number, maxItems: number): number;
  outPtr(i: number): number;
  outLen(i: number): number;
  headerValue(i: number): bigint;
  trim(maxBytes: number): void;
}

type Instance = PprofExports & AsRuntime;

/** Output buffers larger than this are freed after use; memory past this makes us re-instantiate. */
const TRIM_BYTES = 16 << 20;
const MAX_RETAINED_MEMORY = 256 << 20;

let instance: Instance | null = null;

function getInstance(): Instance {
  if (!instance) instance = instantiateWasm<PprofExports>('pprof');
  return instance;
}

/** Drops the current instance (after an abort or when its memory grew too large). */
export function resetWasmDecoder(): void {
  instance = null;
}

export function decodePprofWasm(bytes: Uint8Array, maxItems = DEFAULT_MAX_ITEMS): DecodedPprof {
  const w = getInstance();
  let code: number;
  try {
    const ptr = w.inputPtr(bytes.length);
    new Uint8Array(w.memory.buffer, ptr, bytes.length).set(bytes);
    code = w.decode(bytes.length, Math.max(0, Math.min(maxItems, 0x7fffffff)));
  } catch (e) {
    instance = null;
    const msg = e instanceof Error ? e.message : String(e);
    throw new DecodeError('TOO_LARGE', `pprof decoder ran out of memory (${msg})`, 'send smaller profiles');
  }
  if (code !== 0) {
    const off = Number(w.headerValue(9));
    throw decodeFailure(code, off);
  }
  const buf = w.memory.buffer;
  const u32 = (i: number): Uint32Array => new Uint32Array(buf, w.outPtr(i), w.outLen(i)).slice();
  const i32 = (i: number): Int32Array => new Int32Array(buf, w.outPtr(i), w.outLen(i)).slice();
  const f64 = (i: number): Float64Array => new Float64Array(buf, w.outPtr(i), w.outLen(i)).slice();
  const h = (i: number): bigint => w.headerValue(i);
  const d: DecodedPprof = {
    bytes,
    strOff: u32(OUT.strOff),
    strLen: u32(OUT.strLen),
    sampleTypes: i32(OUT.sampleTypes),
    valuesPerSample: Number(h(8)),
    timeNanos: h(0),
    durationNanos: h(1),
    period: h(2),
    periodType: Number(h(3)),
    periodUnit: Number(h(4)),
    defaultSampleType: Number(h(5)),
    dropFrames: Number(h(6)),
    keepFrames: Number(h(7)),
    sampleLocStart: u32(OUT.sampleLocStart),
    sampleLoc: i32(OUT.sampleLoc),
    values: f64(OUT.values),
    sampleLabStart: u32(OUT.sampleLabStart),
    labKey: i32(OUT.labKey),
    labStr: i32(OUT.labStr),
    labNum: f64(OUT.labNum),
    labNumUnit: i32(OUT.labNumUnit),
    locId: f64(OUT.locId),
    locMapping: i32(OUT.locMapping),
    locAddr: new BigUint64Array(buf, w.outPtr(OUT.locAddr), w.outLen(OUT.locAddr)).slice(),
    locLineStart: u32(OUT.locLineStart),
    lineFunc: i32(OUT.lineFunc),
    lineNo: f64(OUT.lineNo),
    fnId: f64(OUT.fnId),
    fnName: i32(OUT.fnName),
    fnSystemName: i32(OUT.fnSystemName),
    fnFilename: i32(OUT.fnFilename),
    fnStartLine: f64(OUT.fnStartLine),
    mapId: f64(OUT.mapId),
    mapFilename: i32(OUT.mapFilename),
    mapBuildId: i32(OUT.mapBuildId),
  };
  if (bytes.length > TRIM_BYTES) w.trim(TRIM_BYTES);
  if (w.memory.buffer.byteLength > MAX_RETAINED_MEMORY) instance = null;
  return d;
}

export const wasmDecoder: PprofDecoder = {
  name: 'wasm',
  decode: (bytes, maxItems) => decodePprofWasm(bytes, maxItems),
};
