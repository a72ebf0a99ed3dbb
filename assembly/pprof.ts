// pprof (profile.proto) decoder: gunzipped bytes in, flat arrays out.
//
// Ownership: JS asks for an input buffer with inputPtr(len) (allocated once, grown on demand and
// reused), writes the profile bytes there, calls decode(len, maxItems) and copies the output arrays
// out through outPtr(i)/outLen(i) before the next call. Nothing is returned by reference across calls.
//
// Malformed input never traps: every read is bounds-checked and sets an error code (decode's
// result) instead; the only abort left is running out of memory, after which JS drops the instance.
// The TypeScript twin (src/pipeline/decode/profiles/reference.ts) implements the same contract; the
// tests require both to produce identical arrays.
import { Vec } from './_vec';
import { IdMap } from './_pprof_idmap';
import { inPtr } from './_input';
export { inputPtr } from './_input';

// ---- error codes (mirrored in src/pipeline/decode/profiles/decoded.ts) ----
const ERR_TRUNCATED: i32 = 1; // varint or fixed field runs past the end
const ERR_BAD_VARINT: i32 = 2; // varint longer than 10 bytes
const ERR_BAD_LENGTH: i32 = 3; // declared length past the end of the enclosing message
const ERR_BAD_WIRE_TYPE: i32 = 4; // groups, wire types 6/7, field 0, or a known field with the wrong type
const ERR_DUPLICATE_ID: i32 = 5; // a location/function/mapping id repeats or is 0
const ERR_UNKNOWN_LOCATION: i32 = 6; // a sample references a location id that is not defined
const ERR_UNKNOWN_FUNCTION: i32 = 7; // a line references a function id that is not defined
const ERR_BAD_STRING_INDEX: i32 = 8; // a string index past the string table
const ERR_TOO_MANY_ITEMS: i32 = 9; // more decoded items than maxItems

// ---- outputs (indices for outPtr/outLen; mirrored in decoded.ts OUT) ----
const strOff = new Vec(2); // 0  u32 offset of each string-table entry in the input
const strLen = new Vec(2); // 1  u32 byte length
const types = new Vec(2); // 2  i32 pairs: sample_type (type, unit) string indices
const sLocStart = new Vec(2); // 3  u32, nSamples+1
const sLoc = new Vec(2); // 4  i32 location index (resolved from ids), leaf first
const values = new Vec(3); // 5  f64 nSamples × nValues matrix
const sLabStart = new Vec(2); // 6  u32, nSamples+1
const labKey = new Vec(2); // 7  i32 string index
const labStr = new Vec(2); // 8  i32 string index (0 for numeric labels)
const labNum = new Vec(3); // 9  f64
const labNumUnit = new Vec(2); // 10 i32 string index
const locId = new Vec(3); // 11 f64 id (informational)
const locMapping = new Vec(2); // 12 i32 mapping index or -1
const locAddr = new Vec(3); // 13 u64 address
const locLineStart = new Vec(2); // 14 u32, nLocations+1
const lineFunc = new Vec(2); // 15 i32 function index or -1; line[0] is the innermost (leaf) frame
const lineNo = new Vec(3); // 16 f64
const fnId = new Vec(3); // 17 f64 id
const fnName = new Vec(2); // 18 i32 string index
const fnSystemName = new Vec(2); // 19
const fnFilename = new Vec(2); // 20
const fnStartLine = new Vec(3); // 21 f64
const mapId = new Vec(3); // 22 f64 id
const mapFilename = new Vec(2); // 23 i32 string index
const mapBuildId = new Vec(2); // 24 i32 string index
const OUTPUTS: i32 = 25;

// ---- scratch ----
const sLocRaw = new Vec(3); // u64 location ids as read
const sValStart = new Vec(2); // u32 start of each sample's values in rawVals
const rawVals = new Vec(3); // f64 values as read
const locIdRaw = new Vec(3);
const locMapIdRaw = new Vec(3);
const lineFuncRaw = new Vec(3);
const fnIdRaw = new Vec(3);
const mapIdRaw = new Vec(3);
const locMap = new IdMap();
const fnMap = new IdMap();
const mapMap = new IdMap();

// header: 0 time_nanos, 1 duration_nanos, 2 period, 3 period_type.type, 4 period_type.unit,
// 5 default_sample_type, 6 drop_frames, 7 keep_frames, 8 values per sample, 9 error offset
const header = new StaticArray<i64>(10);

let pos: usize = 0;
let end: usize = 0;
let base: usize = 0;
let err: i32 = 0;
let maxItemsLimit: i32 = 0;


export function outPtr(i: i32): usize {
  const v = outVec(i);
  return v == null ? 0 : v.ptr;
}

export function outLen(i: i32): i32 {
  const v = outVec(i);
  return v == null ? 0 : v.len;
}

export function headerValue(i: i32): i64 {
  return i >= 0 && i < 10 ? header[i] : 0;
}

/** Frees output buffers that grew past maxBytes (after an unusually large profile). */
export function trim(maxBytes: i32): void {
  for (let i = 0; i < OUTPUTS; i++) outVec(i)!.trim(<usize>maxBytes);
  sLocRaw.trim(<usize>maxBytes);
  sValStart.trim(<usize>maxBytes);
  rawVals.trim(<usize>maxBytes);
  locIdRaw.trim(<usize>maxBytes);
  locMapIdRaw.trim(<usize>maxBytes);
  lineFuncRaw.trim(<usize>maxBytes);
  fnIdRaw.trim(<usize>maxBytes);
  mapIdRaw.trim(<usize>maxBytes);
  locMap.trim(<usize>maxBytes);
  fnMap.trim(<usize>maxBytes);
  mapMap.trim(<usize>maxBytes);
}

function outVec(i: i32): Vec | null {
  switch (i) {
    case 0: return strOff;
    case 1: return strLen;
    case 2: return types;
    case 3: return sLocStart;
    case 4: return sLoc;
    case 5: return values;
    case 6: return sLabStart;
    case 7: return labKey;
    case 8: return labStr;
    case 9: return labNum;
    case 10: return labNumUnit;
    case 11: return locId;
    case 12: return locMapping;
    case 13: return locAddr;
    case 14: return locLineStart;
    case 15: return lineFunc;
    case 16: return lineNo;
    case 17: return fnId;
    case 18: return fnName;
    case 19: return fnSystemName;
    case 20: return fnFilename;
    case 21: return fnStartLine;
    case 22: return mapId;
    case 23: return mapFilename;
    case 24: return mapBuildId;
  }
  return null;
}

// ---- reading ----

@inline function fail(code: i32): void {
  if (err == 0) {
    err = code;
    header[9] = <i64>(pos - base);
  }
  pos = end;
}

/** One-byte varints (most tags, lengths, ids and small values) without a call. */
@inline function readVarint(): u64 {
  const p = pos;
  if (p < end) {
    const b = load<u8>(p);
    if (b < 0x80) {
      pos = p + 1;
      return <u64>b;
    }
  }
  return readVarintSlow();
}

function readVarintSlow(): u64 {
  let p = pos;
  const e = end;
  if (p >= e) {
    fail(ERR_TRUNCATED);
    return 0;
  }
  let b = <u64>load<u8>(p++);
  if (b < 0x80) {
    pos = p;
    return b;
  }
  let r = b & 0x7f;
  let shift: u64 = 7;
  while (true) {
    if (p >= e) {
      fail(ERR_TRUNCATED);
      return 0;
    }
    b = <u64>load<u8>(p++);
    r |= (b & 0x7f) << shift;
    if (b < 0x80) break;
    shift += 7;
    if (shift >= 70) {
      fail(ERR_BAD_VARINT);
      return 0;
    }
  }
  pos = p;
  return r;
}

/** Reads a length prefix and checks it fits in the enclosing message; returns the end offset. */
function readLenEnd(): usize {
  const len = readVarint();
  if (err != 0) return pos;
  if (len > <u64>(end - pos)) {
    fail(ERR_BAD_LENGTH);
    return pos;
  }
  return pos + <usize>len;
}

/** String indices are stored as i32; anything past i32 is recorded as -2 and refused at the end. */
@inline function strIndex(v: u64): i32 {
  return v > 0x7fffffff ? -2 : <i32>v;
}

function skip(wt: u32): void {
  if (wt == 0) {
    readVarint();
  } else if (wt == 2) {
    pos = readLenEnd();
  } else if (wt == 1) {
    if (end - pos < 8) fail(ERR_TRUNCATED);
    else pos += 8;
  } else if (wt == 5) {
    if (end - pos < 4) fail(ERR_TRUNCATED);
    else pos += 4;
  } else {
    fail(ERR_BAD_WIRE_TYPE);
  }
}

/** Reads a tag; returns field number (0 after a failure) and leaves the wire type in `wireType`. */
let wireType: u32 = 0;
const MAX_FIELD: u64 = 0x1fffffff;
@inline function readTag(): u32 {
  const t = readVarint();
  wireType = <u32>t & 7;
  const f = t >> 3;
  // Protobuf field numbers are 1 to 2^29 - 1; a larger one is refused, not truncated to 32 bits.
  if ((f == 0 || f > MAX_FIELD) && err == 0) fail(ERR_BAD_WIRE_TYPE);
  return <u32>f;
}

// Enters a length-delimited submessage: returns the outer end to restore with leave().
@inline function enter(): usize {
  const outer = end;
  const e = readLenEnd();
  if (err == 0) end = e;
  return outer;
}

@inline function leave(outer: usize): void {
  if (err == 0) pos = end;
  end = outer;
  if (err != 0) pos = end;
}

function parseValueType(isPeriod: bool): void {
  const outer = enter();
  let t: i32 = 0;
  let u: i32 = 0;
  while (pos < end) {
    const f = readTag();
    if (f == 1 && wireType == 0) t = strIndex(readVarint());
    else if (f == 2 && wireType == 0) u = strIndex(readVarint());
    else if (f == 1 || f == 2) fail(ERR_BAD_WIRE_TYPE);
    else skip(wireType);
  }
  leave(outer);
  if (isPeriod) {
    header[3] = t;
    header[4] = u;
  } else {
    types.push32(t);
    types.push32(u);
  }
}

function parseLabel(): void {
  const outer = enter();
  let k: i32 = 0;
  let s: i32 = 0;
  let n: f64 = 0;
  let nu: i32 = 0;
  while (pos < end) {
    const f = readTag();
    if (wireType == 0 && f >= 1 && f <= 4) {
      const v = readVarint();
      if (f == 1) k = strIndex(v);
      else if (f == 2) s = strIndex(v);
      else if (f == 3) n = <f64>(<i64>v);
      else nu = strIndex(v);
    } else if (f >= 1 && f <= 4) fail(ERR_BAD_WIRE_TYPE);
    else skip(wireType);
  }
  leave(outer);
  labKey.push32(k);
  labStr.push32(s);
  labNum.pushF64(n);
  labNumUnit.push32(nu);
}

/**
 * Decodes the packed varints of [pos, end) straight into v (64-bit slots: i64, or f64 when asF64),
 * reserving end-pos slots once (a varint takes at least one byte). Same checks, codes and error
 * offsets as readVarint.
 */
function packedInto(v: Vec, asF64: bool): void {
  const e = end;
  v.reserve(v.len + <i32>(e - pos));
  let p = pos;
  let out = v.ptr + (<usize>v.len << 3);
  while (p < e) {
    const start = p;
    let b = <u64>load<u8>(p++);
    let r = b;
    if (b >= 0x80) {
      r = b & 0x7f;
      let shift: u64 = 7;
      while (true) {
        if (p >= e) {
          pos = start;
          v.len = <i32>((out - v.ptr) >> 3);
          fail(ERR_TRUNCATED);
          return;
        }
        b = <u64>load<u8>(p++);
        r |= (b & 0x7f) << shift;
        if (b < 0x80) break;
        shift += 7;
        if (shift >= 70) {
          pos = start;
          v.len = <i32>((out - v.ptr) >> 3);
          fail(ERR_BAD_VARINT);
          return;
        }
      }
    }
    if (asF64) store<f64>(out, <f64>(<i64>r));
    else store<i64>(out, <i64>r);
    out += 8;
  }
  v.len = <i32>((out - v.ptr) >> 3);
  pos = p;
}

function parseSample(): void {
  const outer = enter();
  sLocStart.push32(sLocRaw.len);
  sValStart.push32(rawVals.len);
  sLabStart.push32(labKey.len);
  while (pos < end) {
    const f = readTag();
    if (f == 1 || f == 2) {
      if (wireType == 2) {
        const o = enter();
        packedInto(f == 1 ? sLocRaw : rawVals, f == 2);
        leave(o);
      } else if (wireType == 0) {
        const v = readVarint();
        if (f == 1) sLocRaw.push64(<i64>v);
        else rawVals.pushF64(<f64>(<i64>v));
      } else fail(ERR_BAD_WIRE_TYPE);
    } else if (f == 3) {
      if (wireType == 2) parseLabel();
      else fail(ERR_BAD_WIRE_TYPE);
    } else skip(wireType);
  }
  leave(outer);
}

function parseLine(): void {
  const outer = enter();
  let fid: u64 = 0;
  let ln: f64 = 0;
  while (pos < end) {
    const f = readTag();
    if (wireType == 0 && f >= 1 && f <= 3) {
      const v = readVarint();
      if (f == 1) fid = v;
      else if (f == 2) ln = <f64>(<i64>v);
    } else if (f >= 1 && f <= 3) fail(ERR_BAD_WIRE_TYPE);
    else skip(wireType);
  }
  leave(outer);
  lineFuncRaw.push64(<i64>fid);
  lineNo.pushF64(ln);
}

function parseLocation(): void {
  const outer = enter();
  let id: u64 = 0;
  let mid: u64 = 0;
  let addr: u64 = 0;
  locLineStart.push32(lineNo.len);
  while (pos < end) {
    const f = readTag();
    if (f == 4) {
      if (wireType == 2) parseLine();
      else fail(ERR_BAD_WIRE_TYPE);
    } else if (f >= 1 && f <= 3) {
      if (wireType != 0) fail(ERR_BAD_WIRE_TYPE);
      else {
        const v = readVarint();
        if (f == 1) id = v;
        else if (f == 2) mid = v;
        else addr = v;
      }
    } else skip(wireType);
  }
  leave(outer);
  locIdRaw.push64(<i64>id);
  locMapIdRaw.push64(<i64>mid);
  locAddr.push64(<i64>addr);
}

function parseFunction(): void {
  const outer = enter();
  let id: u64 = 0;
  let name: i32 = 0;
  let sys: i32 = 0;
  let file: i32 = 0;
  let start: f64 = 0;
  while (pos < end) {
    const f = readTag();
    if (wireType == 0 && f >= 1 && f <= 5) {
      const v = readVarint();
      if (f == 1) id = v;
      else if (f == 2) name = strIndex(v);
      else if (f == 3) sys = strIndex(v);
      else if (f == 4) file = strIndex(v);
      else start = <f64>(<i64>v);
    } else if (f >= 1 && f <= 5) fail(ERR_BAD_WIRE_TYPE);
    else skip(wireType);
  }
  leave(outer);
  fnIdRaw.push64(<i64>id);
  fnName.push32(name);
  fnSystemName.push32(sys);
  fnFilename.push32(file);
  fnStartLine.pushF64(start);
}

function parseMapping(): void {
  const outer = enter();
  let id: u64 = 0;
  let file: i32 = 0;
  let build: i32 = 0;
  while (pos < end) {
    const f = readTag();
    if (wireType == 0 && f >= 1 && f <= 10) {
      const v = readVarint();
      if (f == 1) id = v;
      else if (f == 5) file = strIndex(v);
      else if (f == 6) build = strIndex(v);
    } else if (f >= 1 && f <= 10) fail(ERR_BAD_WIRE_TYPE);
    else skip(wireType);
  }
  leave(outer);
  mapIdRaw.push64(<i64>id);
  mapFilename.push32(file);
  mapBuildId.push32(build);
}

@inline function itemCount(): i32 {
  return (
    strOff.len + types.len + sLocStart.len + sLocRaw.len + rawVals.len + labKey.len + locIdRaw.len +
    lineNo.len + fnName.len + mapFilename.len
  );
}

function resetAll(): void {
  for (let i = 0; i < OUTPUTS; i++) outVec(i)!.reset();
  sLocRaw.reset();
  sValStart.reset();
  rawVals.reset();
  locIdRaw.reset();
  locMapIdRaw.reset();
  lineFuncRaw.reset();
  fnIdRaw.reset();
  mapIdRaw.reset();
  for (let i = 0; i < 10; i++) header[i] = 0;
}

@inline function badStr(i: i32, n: i32): bool {
  return i < 0 || i >= n;
}

/**
 * Decodes `len` bytes previously written at inputPtr(). Returns 0 or an ERR_* code; on error the
 * header's slot 9 holds the byte offset where decoding stopped. maxItems bounds the number of
 * decoded elements (strings, samples, values, location ids, labels, locations, lines, functions).
 */
export function decode(len: i32, maxItems: i32): i32 {
  maxItemsLimit = maxItems;
  resetAll();
  err = 0;
  base = inPtr;
  pos = inPtr;
  end = inPtr + <usize>len;
  while (pos < end) {
    const f = readTag();
    const wt = wireType;
    if (f >= 1 && f <= 6) {
      if (wt != 2) {
        fail(ERR_BAD_WIRE_TYPE);
        break;
      }
      if (f == 1) parseValueType(false);
      else if (f == 2) parseSample();
      else if (f == 3) parseMapping();
      else if (f == 4) parseLocation();
      else if (f == 5) parseFunction();
      else {
        const e = readLenEnd();
        if (err != 0) break;
        strOff.push32(<i32>(pos - base));
        strLen.push32(<i32>(e - pos));
        pos = e;
      }
      if (itemCount() > maxItems) fail(ERR_TOO_MANY_ITEMS);
    } else if (f == 11) {
      if (wt != 2) fail(ERR_BAD_WIRE_TYPE);
      else parseValueType(true);
    } else if ((f >= 7 && f <= 10) || f == 12 || f == 14) {
      if (wt != 0) {
        fail(ERR_BAD_WIRE_TYPE);
        break;
      }
      const v = readVarint();
      if (f == 7) header[6] = strIndex(v);
      else if (f == 8) header[7] = strIndex(v);
      else if (f == 9) header[0] = <i64>v;
      else if (f == 10) header[1] = <i64>v;
      else if (f == 12) header[2] = <i64>v;
      else header[5] = strIndex(v);
    } else {
      skip(wt);
    }
  }
  if (err == 0) finish();
  return err;
}

function finish(): void {
  const nStr = strOff.len;
  // string indices
  for (let i = 0; i < types.len; i++) if (badStr(types.get32(i), nStr)) return failAt(ERR_BAD_STRING_INDEX);
  for (let i = 3; i <= 7; i++) if (badStr(<i32>header[i], nStr)) return failAt(ERR_BAD_STRING_INDEX);
  for (let i = 0; i < labKey.len; i++) {
    if (badStr(labKey.get32(i), nStr) || badStr(labStr.get32(i), nStr) || badStr(labNumUnit.get32(i), nStr))
      return failAt(ERR_BAD_STRING_INDEX);
  }
  for (let i = 0; i < fnName.len; i++) {
    if (badStr(fnName.get32(i), nStr) || badStr(fnSystemName.get32(i), nStr) || badStr(fnFilename.get32(i), nStr))
      return failAt(ERR_BAD_STRING_INDEX);
  }
  for (let i = 0; i < mapFilename.len; i++) {
    if (badStr(mapFilename.get32(i), nStr) || badStr(mapBuildId.get32(i), nStr)) return failAt(ERR_BAD_STRING_INDEX);
  }

  // ids → indices
  const nLoc = locIdRaw.len;
  const nFn = fnIdRaw.len;
  const nMap = mapIdRaw.len;
  if (!locMap.build(locIdRaw, nLoc)) return failAt(ERR_DUPLICATE_ID);
  if (!fnMap.build(fnIdRaw, nFn)) return failAt(ERR_DUPLICATE_ID);
  if (!mapMap.build(mapIdRaw, nMap)) return failAt(ERR_DUPLICATE_ID);
  for (let i = 0; i < nLoc; i++) {
    locId.pushF64(<f64>(<u64>locIdRaw.get64(i)));
    const mid = <u64>locMapIdRaw.get64(i);
    locMapping.push32(mid == 0 ? -1 : mapMap.get(mid));
  }
  locLineStart.push32(lineNo.len);
  for (let i = 0; i < nFn; i++) fnId.pushF64(<f64>(<u64>fnIdRaw.get64(i)));
  for (let i = 0; i < nMap; i++) mapId.pushF64(<f64>(<u64>mapIdRaw.get64(i)));
  const nLines = lineFuncRaw.len;
  lineFunc.reserve(nLines);
  for (let i = 0; i < nLines; i++) {
    const fid = <u64>lineFuncRaw.get64(i);
    let idx: i32 = -1;
    if (fid != 0) {
      idx = fnMap.get(fid);
      if (idx < 0) return failAt(ERR_UNKNOWN_FUNCTION);
    }
    lineFunc.push32(idx);
  }
  const nIds = sLocRaw.len;
  sLoc.reserve(nIds);
  const src = sLocRaw.ptr;
  const dst = sLoc.ptr;
  if (locMap.isDense) {
    const table = locMap.dense.ptr;
    const tableLen = <u64>locMap.denseLen;
    for (let i = 0; i < nIds; i++) {
      const id = load<u64>(src + (<usize>i << 3));
      const idx = id < tableLen ? load<i32>(table + (<usize>id << 2)) : -1;
      if (idx < 0) return failAt(ERR_UNKNOWN_LOCATION);
      store<i32>(dst + (<usize>i << 2), idx);
    }
  } else {
    for (let i = 0; i < nIds; i++) {
      const idx = locMap.get(load<u64>(src + (<usize>i << 3)));
      if (idx < 0) return failAt(ERR_UNKNOWN_LOCATION);
      store<i32>(dst + (<usize>i << 2), idx);
    }
  }
  sLoc.len = nIds;

  // values: nSamples × k matrix, k = max(#sample types, most values on any sample); short rows pad with 0
  const nSamples = sLocStart.len;
  sLocStart.push32(sLocRaw.len);
  sValStart.push32(rawVals.len);
  sLabStart.push32(labKey.len);
  let k = types.len >> 1;
  let uniform = true;
  for (let i = 0; i < nSamples; i++) {
    const c = sValStart.get32(i + 1) - sValStart.get32(i);
    if (c > k) k = c;
  }
  for (let i = 0; i < nSamples; i++) {
    if (sValStart.get32(i + 1) - sValStart.get32(i) != k) {
      uniform = false;
      break;
    }
  }
  header[8] = k;
  if (uniform) {
    values.reserve(rawVals.len);
    memory.copy(values.ptr, rawVals.ptr, <usize>rawVals.len << 3);
    values.len = rawVals.len;
  } else {
    // a few samples with many values must not make the padded matrix explode
    if (<i64>nSamples * <i64>k > <i64>maxItemsLimit) return failAt(ERR_TOO_MANY_ITEMS);
    values.fillF64(nSamples * k, 0);
    for (let i = 0; i < nSamples; i++) {
      const s = sValStart.get32(i);
      const c = sValStart.get32(i + 1) - s;
      for (let j = 0; j < c; j++) values.setF64(i * k + j, rawVals.getF64(s + j));
    }
  }
}

function failAt(code: i32): void {
  err = code;
  header[9] = -1;
}
