// OTLP/protobuf traces → svc_spans CSV through the WASM transcoder (assembly/spans.ts), without
// the column batch in between. WASM writes the span-owned cells of each row; the cells derived by
// TypeScript rules (service name, the promoted columns of pipeline/promote.ts) are computed here
// from the attribute values WASM picked and written with the CSV encoder's own cell code; WASM
// then interleaves both. The result is byte-identical to decodeTraces + encodeCsv (the twin, which
// the tests compare against); where WASM declines (malformed input, invalid UTF-8, times past
// 2^53 µs) the caller runs the twin, which decodes or explains the error as before.
//
// Ownership across the boundary is as in pipeline/decode/profiles/wasm.ts: the module owns its buffers,
// everything read here is copied out before the next call, and an abort drops the instance.
import { instantiateWasm, type AsRuntime } from '../../../compute/wasm.js';
import { serviceSpans, touchedBuckets, type ColumnBatch } from '../../../store/batch.js';
import { CsvSink, cellsEncoder } from '../../../store/csv.js';
import { SPANS } from '../../../store/schema.js';
import { RESOURCE_COLUMNS, promoteResource, promoteSpan } from '../../promote.js';
import { RESOURCE_PICK, SPAN_PICK, SPAN_PROMOTED_COLUMNS, SPAN_REJECTIONS, type Picked } from './normalise.js';
import { Rejections } from './batch.js';
import type { NodeBuffer } from '../../../store/byte-sink.js';
import type { EncodedBody } from '../../tasks.js';

interface SpansExports {
  inputPtr(len: number): number;
  addKey(group: number, len: number): void;
  transcode(len: number, nowUs: number): number;
  outPtr(i: number): number;
  outLen(i: number): number;
  tailsPtr(len: number): number;
  assemble(index: number): void;
  trim(maxBytes: number): void;
}

type Instance = SpansExports & AsRuntime;

/** Output indices (assembly/spans.ts outBuf). */
const OUT = { spans: 1, times: 2, picks: 3, resources: 4, rejects: 5, pickJson: 6, csv: 7 } as const;
const SPAN_STRIDE = 12;
const PICK_STRIDE = 4;
const T = { NULL: 0, ASCII: 1, UTF8: 2, BOOL: 3, NUMBER: 4, BIGINT: 5, JSON: 6, BYTES: 7 } as const;

/** Key ids are positions in these lists (groups 0, 1, 2 of addKey). */
const SPAN_KEY_LIST = [...SPAN_PICK];
const RESOURCE_KEY_LIST = [...RESOURCE_PICK];
const EXCEPTION_KEY_LIST = ['exception.type'];

const TRIM_BYTES = 16 << 20;
const MAX_RETAINED_MEMORY = 256 << 20;

let instance: Instance | null = null;

function getInstance(): Instance {
  if (instance) return instance;
  const w = instantiateWasm<SpansExports>('spans');
  [SPAN_KEY_LIST, RESOURCE_KEY_LIST, EXCEPTION_KEY_LIST].forEach((keys, group) => {
    for (const k of keys) {
      const b = Buffer.from(k, 'utf8');
      const at = w.inputPtr(b.length); // may grow the memory: its buffer is taken after
      new Uint8Array(w.memory.buffer, at, b.length).set(b);
      w.addKey(group, b.length);
    }
  });
  return (instance = w);
}

const serviceCell = cellsEncoder(SPANS, ['service_name']);
const resourceCells = cellsEncoder(SPANS, RESOURCE_COLUMNS);
const promotedCells = cellsEncoder(SPANS, SPAN_PROMOTED_COLUMNS);
const cells = new CsvSink(1 << 16, 1 << 24);

/** The request as svc_spans CSV, or null when the twin (decodeTraces + encodeCsv) must run instead. */
export function transcodeSpans(body: Uint8Array, nowUs = Date.now() * 1000): EncodedBody | null {
  let w: Instance;
  let code: number;
  try {
    w = getInstance();
    const at = w.inputPtr(body.length); // may grow the memory: its buffer is taken after
    new Uint8Array(w.memory.buffer, at, body.length).set(body);
    code = w.transcode(body.length, nowUs);
  } catch {
    instance = null; // out of memory: a fresh instance next time, the twin this time
    return null;
  }
  if (code !== 0) return null;
  try {
    return finish(w, body);
  } finally {
    if (body.length > TRIM_BYTES) w.trim(TRIM_BYTES);
    if (w.memory.buffer.byteLength > MAX_RETAINED_MEMORY) instance = null;
  }
}

function finish(w: Instance, body: Uint8Array): EncodedBody {
  const mem = w.memory.buffer;
  const i32 = (i: number) => new Int32Array(mem, w.outPtr(i), w.outLen(i) >> 2);
  const f64 = (i: number) => new Float64Array(mem, w.outPtr(i), w.outLen(i) >> 3);
  const spans = i32(OUT.spans);
  const times = f64(OUT.times);
  const picks = f64(OUT.picks);
  const resources = i32(OUT.resources);
  const rejects = i32(OUT.rejects);
  const input = (Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength)) as NodeBuffer;
  const pickJson = Buffer.from(mem, w.outPtr(OUT.pickJson), w.outLen(OUT.pickJson)) as NodeBuffer;

  const text = (a: number, n: number, ascii: boolean) => (ascii ? input.latin1Slice(a, a + n) : input.utf8Slice(a, a + n));
  const value = (p: number): unknown => {
    const a = picks[p + 2]!;
    const b = picks[p + 3]!;
    switch (picks[p + 1]) {
      case T.ASCII:
      case T.UTF8: return text(a, b, picks[p + 1] === T.ASCII);
      case T.BOOL: return a === 1;
      case T.NUMBER: return a;
      case T.BIGINT: return BigInt.asIntN(64, (BigInt(b) << 32n) | BigInt(a));
      case T.JSON: return JSON.parse(pickJson.utf8Slice(a, a + b));
      case T.BYTES: return input.base64Slice(a, a + b);
      default: return null;
    }
  };
  const pickedOf = (from: number, to: number, keys: readonly string[], skip: number): Picked => {
    const out: Picked = {};
    for (let k = from; k < to; k++) if (k !== skip) out[keys[picks[k * PICK_STRIDE]!]!] = value(k * PICK_STRIDE);
    return out;
  };

  // The JS cells: per resource the service cell then its promoted cells, per span its promoted
  // cells; then their index (i32 offsets, see assemble).
  const nRes = resources.length >> 1;
  const nSpans = spans.length / SPAN_STRIDE;
  const index = new Int32Array(nRes * 3 + nSpans * 2);
  const serviceOf: string[] = [];
  cells.n = 0;
  for (let r = 0; r < nRes; r++) {
    const p = promoteResource(pickedOf(resources[2 * r]!, resources[2 * r + 1]!, RESOURCE_KEY_LIST, -1));
    serviceOf.push(p.serviceName);
    index[3 * r] = cells.n;
    serviceCell(cells, { service_name: p.serviceName });
    index[3 * r + 1] = cells.n;
    resourceCells(cells, Object.fromEntries(RESOURCE_COLUMNS.map((c, i) => [c, p.columns[i]])));
    index[3 * r + 2] = cells.n;
  }
  const serviceColumn: string[] = new Array<string>(nSpans);
  for (let i = 0, x = nRes * 3; i < nSpans; i++, x += 2) {
    const s = i * SPAN_STRIDE;
    const name = text(spans[s + 3]!, spans[s + 4]!, spans[s + 5] === 1);
    const exc = spans[s + 6]!;
    const exceptionType = exc >= 0 ? (value(exc * PICK_STRIDE) as string) : null;
    const picked = pickedOf(spans[s + 10]!, spans[s + 11]!, SPAN_KEY_LIST, exc);
    index[x] = cells.n;
    promotedCells(cells, promoteSpan(spans[s + 1]!, name, spans[s + 2]!, picked, exceptionType) as unknown as Record<string, unknown>);
    index[x + 1] = cells.n;
    serviceColumn[i] = serviceOf[spans[s]!]!;
  }

  // Services and buckets from the two columns they read, by the same functions as the twin's.
  const keyColumns: ColumnBatch = { table: SPANS.name, rows: nSpans, columns: { service_name: serviceColumn, timestamp: Array.from(times) } };
  const rej = new Rejections();
  for (const c of rejects) rej.add(SPAN_REJECTIONS[c as 1 | 2 | 3]);
  const out: EncodedBody = { parts: [], services: serviceSpans([keyColumns]), buckets: touchedBuckets([keyColumns]), accepted: nSpans, rejected: rej.count };
  if (rej.count > 0) out.errorMessage = rej.message;
  if (nSpans === 0) return out;

  const at = (cells.n + 3) & ~3;
  const dst = w.tailsPtr(at + index.byteLength);
  const m = new Uint8Array(w.memory.buffer);
  m.set(cells.b.subarray(0, cells.n), dst);
  m.set(new Uint8Array(index.buffer), dst + at);
  w.assemble(at);
  out.parts.push({ table: SPANS.name, rows: nSpans, csv: new Uint8Array(w.memory.buffer, w.outPtr(OUT.csv), w.outLen(OUT.csv)).slice() });
  cells.n = 0;
  cells.shrink();
  return out;
}
