// Runs a diagnosis's statements on the read pool: one at a time under the call's deadline (DuckDB
// stops within milliseconds when interrupted), or the shared ones concurrently (readShared).
import { DeadlineExceeded, readRows, type ReadPool } from '../../store/readers.js';
import { BUCKET_US, FINE_BIN_US, MINUTE_US, bucketRuns } from '../../core/time.js';
import { EDGE_SAMPLE_SPANS, bucketStart, structureRead, windowSample, type Bounds, type StructureRead, type WindowSample } from './sampling.js';
import { STATEMENTS, type Statement } from './statements.js';
import type { TemplateBinRow, Row, WindowOpRow, WindowErrorRow, ErrorTypeFirstSeenRow, SeriesRows, EdgeRow, CallSequenceRow, CallTreeRow, GaugeRow, LogLevelRow, DeploymentRow, WindowLogRow, ProfileRow, GenAiRow, GenAiBeforeRow, AnomalyRow } from './rows.js';

/** What every diagnosis of the request shares. */
export interface SharedRows {
  windowOps: WindowOpRow[];
  windowErrors: WindowErrorRow[];
  errorTypesFirstSeen: ErrorTypeFirstSeenRow[];
  series: SeriesRows[];
  edges: EdgeRow[];
  /** Edge counts from a slice of the window are scaled up by this (1: the whole window). */
  edgeScale: number;
  /** Where the window's per-operation statistics (windowOps, exceedances) were read; their counts are scaled up by its `scale`. */
  windowSample: WindowSample;
  deployments: DeploymentRow[];
  windowLogs: WindowLogRow[];
  profiles: ProfileRow[];
  genAi: GenAiRow[];
  genAiBefore: GenAiBeforeRow[];
  anomalies: AnomalyRow[];
  /** The call tree and log levels in fine bins over the look-back and window (calltree.ts). */
  callTree: CallTreeRow[];
  /** Where the call tree was read and how it was sampled (structureRead). */
  structureRead: StructureRead;
  logLevels: LogLevelRow[];
  gauges: GaugeRow[];
  callSequences: CallSequenceRow[];
  /** Log records per service, event and fine bin over the call tree's range (log-events evidence). */
  templateBins: TemplateBinRow[];
}

/** The read pool of one diagnosis and the time by which its queries must be done (ms since the epoch). */
export interface Reader {
  reads: ReadPool;
  deadline: number;
  /** If given: ms each statement ran on a connection (not waiting for one), by name, summed over its runs. */
  timings?: Map<string, number>;
}

export class DiagnoseTimeout extends Error {}

/** One statement on a pooled connection, interrupted at the deadline (DuckDB stops within milliseconds). */
async function read(r: Reader, sql: string, name = 'unnamed'): Promise<Row[]> {
  try {
    return await r.reads.use(async (c) => {
      const start = performance.now();
      try {
        return await readRows(c, sql);
      } finally {
        r.timings?.set(name, (r.timings.get(name) ?? 0) + performance.now() - start);
      }
    }, r.deadline);
  } catch (err) {
    throw err instanceof DeadlineExceeded ? new DiagnoseTimeout('the time limit was reached') : err;
  }
}

/** Each statement's name, for the failure of one (`callStructure: Out of Memory Error …`). */
const NAMES = new Map<Statement<never, unknown>, string>(Object.entries(STATEMENTS).map(([name, s]) => [s as Statement<never, unknown>, name]));

/** One statement's rows, decoded; a failure other than the time limit names the statement. */
export async function run<P extends unknown[], T>(r: Reader, s: Statement<P, T>, ...params: P): Promise<T[]> {
  const name = NAMES.get(s as Statement<never, unknown>);
  try {
    return (await read(r, s.sql(...params), name)).map(s.decode);
  } catch (err) {
    if (err instanceof DiagnoseTimeout || !name || !(err instanceof Error)) throw err;
    throw new Error(`${name}: ${err.message}`, { cause: err });
  }
}

/** Counts read from a sample, scaled up to the whole (rounded: the rows stay counts). */
export function scaleCounts<R extends object>(rows: R[], scale: number, keys: readonly (keyof R & string)[]): R[] {
  if (scale === 1) return rows;
  return rows.map((r) => {
    const o = { ...r } as Record<string, unknown>;
    for (const k of keys) o[k] = Math.round((r[k] as number) * scale);
    return o as R;
  });
}

/** Runs the shared statements concurrently. */
export async function readShared(reads: Reader, b: Bounds, scanSpans: number): Promise<SharedRows> {
  const S = STATEMENTS;
  // Two cheap reads first, then the rest longest first: the pool serves reads in the order asked,
  // and a long read asked last would run alone at the end of the call.
  const [dirty, windowSpans] = await Promise.all([run(reads, S.dirtyBuckets, b), run(reads, S.windowSpans, b).then(([c]) => c?.n ?? 0)]);
  const seriesDirty = dirty.filter((d) => d * BUCKET_US < bucketStart(b.from));
  const structure = structureRead(b, windowSpans);
  // The edge join's cost grows with the window's spans: past EDGE_SAMPLE_SPANS it runs on the most
  // recent slice of the window that holds about that many (at least a minute).
  const w = b.to - b.from;
  const slice = windowSpans > EDGE_SAMPLE_SPANS ? Math.max(MINUTE_US, Math.floor((w * EDGE_SAMPLE_SPANS) / windowSpans)) : w;
  const sample = windowSample(b, windowSpans, scanSpans);
  const [windowOps, callStructure, templateBins, logLevels, edges, windowLogs, genAi, windowErrors, series, rawSeries, gauges, profiles, errorTypesFirstSeen, deployments, genAiBefore, anomalies] = await Promise.all([
    run(reads, S.windowOps, sample).then((rows) => scaleCounts(rows, sample.scale, ['n', 'k'])),
    run(reads, S.callStructure, structure, b.to, FINE_BIN_US),
    run(reads, S.templateBins, structure, b.to, FINE_BIN_US),
    run(reads, S.logLevels, structure.lo, b.to, dirty),
    run(reads, S.edges, b, slice),
    run(reads, S.windowLogs, b),
    run(reads, S.genAiWindow, b),
    run(reads, S.windowErrors, b),
    run(reads, S.series, b, seriesDirty),
    Promise.all(bucketRuns(seriesDirty).map(([lo, hi]) => run(reads, S.rawSeries, lo, hi))),
    run(reads, S.resourceGauges, structure.lo, b.to),
    run(reads, S.profiles, b),
    run(reads, S.errorTypesFirstSeen, b, dirty),
    run(reads, S.deployments, b, dirty),
    run(reads, S.genAiBefore, b, dirty),
    run(reads, S.anomalies, b),
  ]);
  return {
    windowOps,
    windowErrors,
    errorTypesFirstSeen,
    series: [...series, ...rawSeries.flat()],
    edges,
    edgeScale: slice < w ? w / slice : 1,
    windowSample: sample,
    deployments,
    windowLogs,
    profiles,
    genAi,
    genAiBefore,
    anomalies,
    callTree: callStructure.flatMap((r) => ('tree' in r ? r.tree : [])),
    structureRead: structure,
    logLevels,
    gauges,
    callSequences: callStructure.flatMap((r) => ('seq' in r ? [r.seq] : [])),
    templateBins,
  };
}

export { read as readSql };

