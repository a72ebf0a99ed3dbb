// The WASM engine of the log template miner (assembly/logminer.ts) behind the MinerCore contract.
// Ownership: the module owns every buffer (input bytes, offsets, per-line outputs, the pattern
// scratch) as module globals, so they are never collected and need no pinning; it reallocates one
// only inside prepare() (doubling) or mine()/patternOf() (pattern scratch). The views below are
// rebuilt whenever memory grew or an address changed, so callers must take views after each call.
import { instantiateWasm } from '../../compute/wasm.js';
import { ENUM_MAX, LEAF_MAX, MAX_PARAMS, SIM_NUM, type CoreConfig, type CoreInput, type CoreOutput, type MinerCore } from './core.js';

interface LogminerExports {
  init(maxTemplatesPerService: number, similarityTenths: number, enumMax: number): void;
  prepare(totalBytes: number, n: number): void;
  inputPtr(): number;
  inputCap(): number;
  offsetsPtr(): number;
  outCapacity(): number;
  idsPtr(): number;
  flagsPtr(): number;
  pcountPtr(): number;
  pslotPtr(): number;
  pstartPtr(): number;
  plenPtr(): number;
  pnumPtr(): number;
  splitPtr(): number;
  changedPtr(): number;
  evictedPtr(): number;
  evictedIntoPtr(): number;
  changedCount(): number;
  evictedCount(): number;
  patPtr(): number;
  mine(svc: number, n: number): void;
  patternOf(id: number): number;
  restore(svc: number, id: number, len: number): void;
  isLive(id: number): number;
  nextId(): number;
  setNextId(id: number): void;
  liveCount(svc: number): number;
}

export class WasmCore implements MinerCore {
  readonly kind = 'wasm' as const;
  private readonly x: ReturnType<typeof instantiateWasm<LogminerExports>>;
  private buffer: ArrayBuffer | null = null;
  private inPtr = -1;
  private offPtr = -1;
  private outPtr = -1;
  private input!: CoreInput;
  private out!: CoreOutput;

  constructor(config: CoreConfig) {
    this.x = instantiateWasm<LogminerExports>('logminer');
    this.x.init(Math.max(1, config.maxTemplatesPerService | 0), config.similarityTenths ?? SIM_NUM, config.enumMax ?? ENUM_MAX);
    this.x.prepare(1024, 64);
    this.views();
  }

  /** (Re)creates the typed-array views when memory grew or a buffer moved. */
  private views(): void {
    const x = this.x;
    const buf = x.memory.buffer;
    const inPtr = x.inputPtr();
    const offPtr = x.offsetsPtr();
    const outPtr = x.idsPtr();
    if (buf === this.buffer && inPtr === this.inPtr && offPtr === this.offPtr && outPtr === this.outPtr) return;
    this.buffer = buf;
    this.inPtr = inPtr;
    this.offPtr = offPtr;
    this.outPtr = outPtr;
    const cap = x.outCapacity();
    this.input = {
      bytes: new Uint8Array(buf, x.inputPtr(), x.inputCap()),
      offsets: new Int32Array(buf, x.offsetsPtr(), new Uint32Array(buf, x.offsetsPtr() - 4, 1)[0]! >>> 2),
    };
    this.out = {
      ids: new Float64Array(buf, x.idsPtr(), cap),
      flags: new Uint8Array(buf, x.flagsPtr(), cap),
      paramCount: new Uint8Array(buf, x.pcountPtr(), cap),
      paramSlot: new Uint16Array(buf, x.pslotPtr(), cap * MAX_PARAMS),
      paramStart: new Int32Array(buf, x.pstartPtr(), cap * MAX_PARAMS),
      paramLen: new Int32Array(buf, x.plenPtr(), cap * MAX_PARAMS),
      paramNum: new Float64Array(buf, x.pnumPtr(), cap * MAX_PARAMS),
      splitFrom: new Float64Array(buf, x.splitPtr(), cap),
      changed: new Float64Array(buf, x.changedPtr(), cap),
      changedCount: 0,
      evicted: new Float64Array(buf, x.evictedPtr(), 2 * cap + LEAF_MAX),
      evictedInto: new Float64Array(buf, x.evictedIntoPtr(), 2 * cap + LEAF_MAX),
      evictedCount: 0,
    };
  }

  prepare(totalBytes: number, n: number): CoreInput {
    this.x.prepare(totalBytes, n);
    this.views();
    return this.input;
  }

  mine(svc: number, n: number): CoreOutput {
    this.x.mine(svc, n);
    this.views();
    this.out.changedCount = this.x.changedCount();
    this.out.evictedCount = this.x.evictedCount();
    return this.out;
  }

  patternBytes(id: number): Uint8Array | null {
    const len = this.x.patternOf(id);
    if (len < 0) return null;
    return new Uint8Array(this.x.memory.buffer, this.x.patPtr(), len).slice();
  }

  isLive(id: number): boolean {
    return this.x.isLive(id) !== 0;
  }

  restore(svc: number, id: number, pattern: Uint8Array): void {
    const input = this.prepare(pattern.length, 0);
    input.bytes.set(pattern, 0);
    this.x.restore(svc, id, pattern.length);
    this.views();
  }

  nextId(): number {
    return this.x.nextId();
  }
  setNextId(id: number): void {
    this.x.setNextId(id);
  }
  liveCount(svc: number): number {
    return this.x.liveCount(svc);
  }
}
