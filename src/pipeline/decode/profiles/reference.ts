// The plain TypeScript twin of assembly/pprof.ts: same input contract, same DecodedPprof output,
// same error codes. Used by the tests (the WASM decoder must produce identical arrays) and by the
// benchmark (the speed-up ratio). Written for clarity first; it is still a single pass over the bytes.
import { DEFAULT_MAX_ITEMS, decodeFailure, type DecodedPprof, type PprofDecoder } from './decoded.js';

class Fail {
  constructor(readonly code: number, readonly offset: number) {}
}

const TWO32 = 4294967296;
/** Largest protobuf field number (2^29 - 1). */
const MAX_FIELD = 0x1fffffff;

class Reader {
  pos = 0;
  end: number;
  lo = 0;
  hi = 0;
  constructor(readonly b: Uint8Array) {
    this.end = b.length;
  }

  fail(code: number): never {
    throw new Fail(code, this.pos);
  }

  /** Reads a varint into lo/hi (unsigned 32-bit halves). */
  varint(): void {
    const b = this.b;
    let p = this.pos;
    if (p >= this.end) this.fail(1);
    let c = b[p++]!;
    if (c < 0x80) {
      this.lo = c;
      this.hi = 0;
      this.pos = p;
      return;
    }
    let lo = c & 0x7f;
    let hi = 0;
    let shift = 7;
    for (;;) {
      if (p >= this.end) this.fail(1);
      c = b[p++]!;
      const bits = c & 0x7f;
      if (shift < 28) lo |= bits << shift;
      else if (shift === 28) {
        lo |= (bits & 0x0f) << 28;
        hi |= bits >>> 4;
      } else if (shift < 64) hi |= bits << (shift - 32);
      if (c < 0x80) break;
      shift += 7;
      if (shift >= 70) this.fail(2);
    }
    this.lo = lo >>> 0;
    this.hi = hi >>> 0;
    this.pos = p;
  }

  u64(): number {
    this.varint();
    return this.hi * TWO32 + this.lo;
  }

  i64(): number {
    this.varint();
    return this.hi >= 0x80000000 ? (this.hi - TWO32) * TWO32 + this.lo : this.hi * TWO32 + this.lo;
  }

  bigU64(): bigint {
    this.varint();
    return this.hi === 0 ? BigInt(this.lo) : (BigInt(this.hi) << 32n) | BigInt(this.lo);
  }

  strIndex(): number {
    this.varint();
    return this.hi !== 0 || this.lo > 0x7fffffff ? -2 : this.lo;
  }

  lenEnd(): number {
    this.varint();
    const len = this.hi * TWO32 + this.lo;
    if (len > this.end - this.pos) this.fail(3);
    return this.pos + len;
  }

  tag(): [number, number] {
    this.varint();
    const f = this.hi * 0x20000000 + (this.lo >>> 3);
    if (f === 0 || f > MAX_FIELD) this.fail(4); // protobuf field numbers are 1 to 2^29 - 1, as in the WASM twin
    return [f, this.lo & 7];
  }

  skip(wt: number): void {
    if (wt === 0) this.varint();
    else if (wt === 2) this.pos = this.lenEnd();
    else if (wt === 1) {
      if (this.end - this.pos < 8) this.fail(1);
      this.pos += 8;
    } else if (wt === 5) {
      if (this.end - this.pos < 4) this.fail(1);
      this.pos += 4;
    } else this.fail(4);
  }

  /** Runs `body` over a length-delimited submessage. */
  sub(body: () => void): void {
    const outer = this.end;
    this.end = this.lenEnd();
    body();
    this.pos = this.end;
    this.end = outer;
  }
}

function buildIdMap(ids: number[]): Map<number, number> | null {
  const m = new Map<number, number>();
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    if (id === 0 || m.has(id)) return null;
    m.set(id, i);
  }
  return m;
}

// One function: the twin of assembly/pprof.ts's single pass over the message, kept line for line.
export function decodePprofReference(bytes: Uint8Array, maxItems = DEFAULT_MAX_ITEMS): DecodedPprof {
  const r = new Reader(bytes);
  const strOff: number[] = [];
  const strLen: number[] = [];
  const types: number[] = [];
  const sLocStart: number[] = [];
  const sLocRaw: number[] = [];
  const sValStart: number[] = [];
  const rawVals: number[] = [];
  const sLabStart: number[] = [];
  const labKey: number[] = [];
  const labStr: number[] = [];
  const labNum: number[] = [];
  const labNumUnit: number[] = [];
  const locIdRaw: number[] = [];
  const locMapIdRaw: number[] = [];
  const locAddr: bigint[] = [];
  const locLineStart: number[] = [];
  const lineFuncRaw: number[] = [];
  const lineNo: number[] = [];
  const fnIdRaw: number[] = [];
  const fnName: number[] = [];
  const fnSystemName: number[] = [];
  const fnFilename: number[] = [];
  const fnStartLine: number[] = [];
  const mapIdRaw: number[] = [];
  const mapFilename: number[] = [];
  const mapBuildId: number[] = [];
  let timeNanos = 0n;
  let durationNanos = 0n;
  let period = 0n;
  let periodType = 0;
  let periodUnit = 0;
  let defaultSampleType = 0;
  let dropFrames = 0;
  let keepFrames = 0;

  const valueType = (isPeriod: boolean): void => {
    let t = 0;
    let u = 0;
    r.sub(() => {
      while (r.pos < r.end) {
        const [f, wt] = r.tag();
        if ((f === 1 || f === 2) && wt === 0) {
          if (f === 1) t = r.strIndex();
          else u = r.strIndex();
        } else if (f === 1 || f === 2) r.fail(4);
        else r.skip(wt);
      }
    });
    if (isPeriod) {
      periodType = t;
      periodUnit = u;
    } else types.push(t, u);
  };

  const label = (): void => {
    let k = 0;
    let s = 0;
    let n = 0;
    let nu = 0;
    r.sub(() => {
      while (r.pos < r.end) {
        const [f, wt] = r.tag();
        if (wt === 0 && f >= 1 && f <= 4) {
          if (f === 1) k = r.strIndex();
          else if (f === 2) s = r.strIndex();
          else if (f === 3) n = r.i64();
          else nu = r.strIndex();
        } else if (f >= 1 && f <= 4) r.fail(4);
        else r.skip(wt);
      }
    });
    labKey.push(k);
    labStr.push(s);
    labNum.push(n);
    labNumUnit.push(nu);
  };

  const sample = (): void => {
    r.sub(() => {
      sLocStart.push(sLocRaw.length);
      sValStart.push(rawVals.length);
      sLabStart.push(labKey.length);
      while (r.pos < r.end) {
        const [f, wt] = r.tag();
        if (f === 1 || f === 2) {
          const into = f === 1 ? sLocRaw : rawVals;
          if (wt === 2) r.sub(() => { while (r.pos < r.end) into.push(f === 1 ? r.u64() : r.i64()); });
          else if (wt === 0) into.push(f === 1 ? r.u64() : r.i64());
          else r.fail(4);
        } else if (f === 3) {
          if (wt === 2) label();
          else r.fail(4);
        } else r.skip(wt);
      }
    });
  };

  const line = (): void => {
    let fid = 0;
    let ln = 0;
    r.sub(() => {
      while (r.pos < r.end) {
        const [f, wt] = r.tag();
        if (wt === 0 && f >= 1 && f <= 3) {
          if (f === 1) fid = r.u64();
          else if (f === 2) ln = r.i64();
          else r.varint();
        } else if (f >= 1 && f <= 3) r.fail(4);
        else r.skip(wt);
      }
    });
    lineFuncRaw.push(fid);
    lineNo.push(ln);
  };

  const location = (): void => {
    let id = 0;
    let mid = 0;
    let addr = 0n;
    r.sub(() => {
      locLineStart.push(lineNo.length);
      while (r.pos < r.end) {
        const [f, wt] = r.tag();
        if (f === 4) {
          if (wt === 2) line();
          else r.fail(4);
        } else if (f >= 1 && f <= 3) {
          if (wt !== 0) r.fail(4);
          if (f === 1) id = r.u64();
          else if (f === 2) mid = r.u64();
          else addr = r.bigU64();
        } else r.skip(wt);
      }
    });
    locIdRaw.push(id);
    locMapIdRaw.push(mid);
    locAddr.push(addr);
  };

  const fn = (): void => {
    let id = 0;
    let name = 0;
    let sys = 0;
    let file = 0;
    let start = 0;
    r.sub(() => {
      while (r.pos < r.end) {
        const [f, wt] = r.tag();
        if (wt === 0 && f >= 1 && f <= 5) {
          if (f === 1) id = r.u64();
          else if (f === 2) name = r.strIndex();
          else if (f === 3) sys = r.strIndex();
          else if (f === 4) file = r.strIndex();
          else start = r.i64();
        } else if (f >= 1 && f <= 5) r.fail(4);
        else r.skip(wt);
      }
    });
    fnIdRaw.push(id);
    fnName.push(name);
    fnSystemName.push(sys);
    fnFilename.push(file);
    fnStartLine.push(start);
  };

  const mapping = (): void => {
    let id = 0;
    let file = 0;
    let build = 0;
    r.sub(() => {
      while (r.pos < r.end) {
        const [f, wt] = r.tag();
        if (wt === 0 && f >= 1 && f <= 10) {
          if (f === 1) id = r.u64();
          else if (f === 5) file = r.strIndex();
          else if (f === 6) build = r.strIndex();
          else r.varint();
        } else if (f >= 1 && f <= 10) r.fail(4);
        else r.skip(wt);
      }
    });
    mapIdRaw.push(id);
    mapFilename.push(file);
    mapBuildId.push(build);
  };

  const items = (): number =>
    strOff.length + types.length + sLocStart.length + sLocRaw.length + rawVals.length + labKey.length +
    locIdRaw.length + lineNo.length + fnName.length + mapFilename.length;

  try {
    while (r.pos < r.end) {
      const [f, wt] = r.tag();
      if (f >= 1 && f <= 6) {
        if (wt !== 2) r.fail(4);
        if (f === 1) valueType(false);
        else if (f === 2) sample();
        else if (f === 3) mapping();
        else if (f === 4) location();
        else if (f === 5) fn();
        else {
          const e = r.lenEnd();
          strOff.push(r.pos);
          strLen.push(e - r.pos);
          r.pos = e;
        }
        if (items() > maxItems) r.fail(9);
      } else if (f === 11) {
        if (wt !== 2) r.fail(4);
        valueType(true);
      } else if ((f >= 7 && f <= 10) || f === 12 || f === 14) {
        if (wt !== 0) r.fail(4);
        if (f === 7) dropFrames = r.strIndex();
        else if (f === 8) keepFrames = r.strIndex();
        else if (f === 9) timeNanos = BigInt.asIntN(64, r.bigU64());
        else if (f === 10) durationNanos = BigInt.asIntN(64, r.bigU64());
        else if (f === 12) period = BigInt.asIntN(64, r.bigU64());
        else defaultSampleType = r.strIndex();
      } else r.skip(wt);
    }

    // ---- finish: the same checks, in the same order, as finish() in assembly/pprof.ts ----
    const nStr = strOff.length;
    const bad = (i: number): boolean => i < 0 || i >= nStr;
    const failAt = (code: number): never => {
      throw new Fail(code, -1);
    };
    if (types.some(bad)) failAt(8);
    if ([periodType, periodUnit, defaultSampleType, dropFrames, keepFrames].some(bad)) failAt(8);
    for (let i = 0; i < labKey.length; i++) if (bad(labKey[i]!) || bad(labStr[i]!) || bad(labNumUnit[i]!)) failAt(8);
    for (let i = 0; i < fnName.length; i++) if (bad(fnName[i]!) || bad(fnSystemName[i]!) || bad(fnFilename[i]!)) failAt(8);
    for (let i = 0; i < mapFilename.length; i++) if (bad(mapFilename[i]!) || bad(mapBuildId[i]!)) failAt(8);

    const locMap = buildIdMap(locIdRaw);
    const fnMap = buildIdMap(fnIdRaw);
    const mapMap = buildIdMap(mapIdRaw);
    if (!locMap || !fnMap || !mapMap) return failAt(5);
    const locMapping = locMapIdRaw.map((mid) => (mid === 0 ? -1 : (mapMap.get(mid) ?? -1)));
    locLineStart.push(lineNo.length);
    const lineFunc = new Int32Array(lineFuncRaw.length);
    for (let i = 0; i < lineFuncRaw.length; i++) {
      const fid = lineFuncRaw[i]!;
      let idx = -1;
      if (fid !== 0) {
        const j = fnMap.get(fid);
        if (j === undefined) failAt(7);
        idx = j!;
      }
      lineFunc[i] = idx;
    }
    const sampleLoc = new Int32Array(sLocRaw.length);
    for (let i = 0; i < sLocRaw.length; i++) {
      const j = locMap.get(sLocRaw[i]!);
      if (j === undefined) failAt(6);
      sampleLoc[i] = j!;
    }

    const nSamples = sLocStart.length;
    sLocStart.push(sLocRaw.length);
    sValStart.push(rawVals.length);
    sLabStart.push(labKey.length);
    let k = types.length >> 1;
    for (let i = 0; i < nSamples; i++) k = Math.max(k, sValStart[i + 1]! - sValStart[i]!);
    // a few samples with many values must not make the padded matrix explode
    let uniform = true;
    for (let i = 0; i < nSamples && uniform; i++) uniform = sValStart[i + 1]! - sValStart[i]! === k;
    if (!uniform && nSamples * k > maxItems) failAt(9);
    const values = new Float64Array(nSamples * k);
    for (let i = 0; i < nSamples; i++) {
      const s = sValStart[i]!;
      const c = sValStart[i + 1]! - s;
      for (let j = 0; j < c; j++) values[i * k + j] = rawVals[s + j]!;
    }

    return {
      bytes,
      strOff: Uint32Array.from(strOff),
      strLen: Uint32Array.from(strLen),
      sampleTypes: Int32Array.from(types),
      valuesPerSample: k,
      timeNanos,
      durationNanos,
      period,
      periodType,
      periodUnit,
      defaultSampleType,
      dropFrames,
      keepFrames,
      sampleLocStart: Uint32Array.from(sLocStart),
      sampleLoc,
      values,
      sampleLabStart: Uint32Array.from(sLabStart),
      labKey: Int32Array.from(labKey),
      labStr: Int32Array.from(labStr),
      labNum: Float64Array.from(labNum),
      labNumUnit: Int32Array.from(labNumUnit),
      locId: Float64Array.from(locIdRaw),
      locMapping: Int32Array.from(locMapping),
      locAddr: BigUint64Array.from(locAddr),
      locLineStart: Uint32Array.from(locLineStart),
      lineFunc,
      lineNo: Float64Array.from(lineNo),
      fnId: Float64Array.from(fnIdRaw),
      fnName: Int32Array.from(fnName),
      fnSystemName: Int32Array.from(fnSystemName),
      fnFilename: Int32Array.from(fnFilename),
      fnStartLine: Float64Array.from(fnStartLine),
      mapId: Float64Array.from(mapIdRaw),
      mapFilename: Int32Array.from(mapFilename),
      mapBuildId: Int32Array.from(mapBuildId),
    };
  } catch (e) {
    if (e instanceof Fail) throw decodeFailure(e.code, e.offset);
    throw e;
  }
}

export const referenceDecoder: PprofDecoder = {
  name: 'reference',
  decode: (bytes, maxItems) => decodePprofReference(bytes, maxItems),
};
