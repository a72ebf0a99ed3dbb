// `tds replay FILE|DIR ...`: recorded telemetry through the normal ingest path (OTLP/HTTP), so the
// same admission, decoding, template mining and acknowledgement apply as to live data. Reads the
// recording (replay/read.ts), moves its timestamps and prefixes its service names if asked (json.ts,
// wire.ts), sends it paced as asked (send.ts) and reports what was sent, acknowledged and rejected,
// with every malformed line or file; a snapshot directory among the arguments is restored.
import { REPLAY_CONCURRENCY, UsageError, optValue, parseTimestampUs } from '../args.js';
import { EXIT_ERROR, EXIT_OK, print, type Ctx } from '../context.js';
import { JsonShapeError, prefixJson, walkJson } from './json.js';
import { profilesJsonToProtobuf, ProtoJsonError } from './profiles-json.js';
import { Progress } from './progress.js';
import { listInputs, readRecording, type Problem, type Unit } from './read.js';
import { Sender, Unreachable, type Prepared } from './send.js';
import { SIGNALS, type Signal } from './shape.js';
import { prefixServices, walkRequest, WireError } from './wire.js';
import { restoreDir } from '../snapshot.js';
import { isoFromUs } from '../../core/time.js';

/** Problems listed in the result; the count covers them all. */
const MAX_LISTED = 100;

interface ReplayOptions {
  shiftTo: 'none' | 'now' | number;
  rate: number | null;
  speed: number | null;
  prefix: string;
  otlpUrl: string;
  concurrency: number;
  signal: Signal | null;
}

function positive(name: string, raw: string): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--${name} ${JSON.stringify(raw)} is not a positive number`);
  return n;
}

/** The OTLP/HTTP receiver: --otlp-url, SVC_OTLP_URL, else the API's host on OTLP/HTTP's port. */
function otlpUrlOf(ctx: Ctx): string {
  const explicit = optValue(ctx.args, 'otlp-url') ?? ctx.io.env.SVC_OTLP_URL;
  const raw = explicit ?? (() => {
    const u = new URL(ctx.baseUrl);
    u.port = '4318';
    return u.origin;
  })();
  try {
    const u = new URL(raw);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw new UsageError(`invalid OTLP URL ${JSON.stringify(raw)}`, 'pass --otlp-url http://host:4318 or set SVC_OTLP_URL');
  }
  return raw;
}

function optionsOf(ctx: Ctx): ReplayOptions {
  const shiftRaw = optValue(ctx.args, 'shift-to') ?? 'none';
  const shiftTo = shiftRaw === 'none' || shiftRaw === 'now' ? shiftRaw : parseTimestampUs('shift-to', shiftRaw);
  const rateRaw = optValue(ctx.args, 'rate');
  const speedRaw = optValue(ctx.args, 'speed');
  if (speedRaw !== undefined && rateRaw !== undefined && rateRaw !== 'max') throw new UsageError('--rate and --speed cannot be combined', 'pace by records a second (--rate N) or by the recording\'s own time (--speed N)');
  const signalRaw = optValue(ctx.args, 'signal');
  if (signalRaw !== undefined && !SIGNALS.includes(signalRaw as Signal)) throw new UsageError(`--signal ${JSON.stringify(signalRaw)} is not one of ${SIGNALS.join(', ')}`);
  const concurrency = positive('concurrency', optValue(ctx.args, 'concurrency') ?? String(REPLAY_CONCURRENCY));
  if (!Number.isInteger(concurrency) || concurrency > 1024) throw new UsageError('--concurrency is a whole number from 1 to 1024');
  return {
    shiftTo,
    rate: rateRaw === undefined || rateRaw === 'max' ? null : positive('rate', rateRaw),
    speed: speedRaw === undefined ? null : positive('speed', speedRaw),
    prefix: optValue(ctx.args, 'service-prefix') ?? '',
    otlpUrl: otlpUrlOf(ctx),
    concurrency,
    signal: (signalRaw as Signal | undefined) ?? null,
  };
}

/** The recording's earliest and latest timestamps (ns): a first read, for --shift-to and --speed. */
async function scan(files: readonly string[], signal: Signal | null): Promise<{ minNs: bigint; maxNs: bigint }> {
  let minNs = 0n;
  let maxNs = 0n;
  for (const file of files) {
    await readRecording(
      file,
      signal,
      async (u) => {
        try {
          const st = u.kind === 'json' ? walkJson(u.doc, u.signal) : walkRequest(u.bytes, u.signal);
          if (st.minNs && (!minNs || st.minNs < minNs)) minNs = st.minNs;
          if (st.maxNs > maxNs) maxNs = st.maxNs;
        } catch {
          // reported by the replay itself
        }
      },
      () => {},
    );
  }
  return { minNs, maxNs };
}

/** The request as sent: timestamps moved, services prefixed, profiles in protobuf; null for an empty one. Throws on a malformed request. */
function prepare(u: Unit, shiftNs: bigint, prefix: string): Prepared | null {
  const o = shiftNs ? { shiftNs } : {};
  if (u.kind === 'json') {
    const st = walkJson(u.doc, u.signal, o);
    if (!st.records) return null;
    if (prefix) prefixJson(u.doc, u.signal, prefix);
    const changed = shiftNs !== 0n || prefix !== '';
    const at = { records: st.records, minNs: st.minNs, maxNs: st.maxNs, file: u.file, at: u.at };
    if (u.signal === 'profiles') return { signal: u.signal, body: profilesJsonToProtobuf(u.doc), contentType: 'application/x-protobuf', ...at };
    const body = !changed && u.raw !== null ? u.raw : JSON.stringify(u.doc);
    return { signal: u.signal, body, contentType: 'application/json', ...at };
  }
  const st = walkRequest(u.bytes, u.signal, o);
  if (!st.records) return null;
  const body = prefix ? prefixServices(u.bytes, prefix) : u.bytes;
  return { signal: u.signal, body, contentType: 'application/x-protobuf', records: st.records, minNs: st.minNs, maxNs: st.maxNs, file: u.file, at: u.at };
}

const bytesOf = (u: Unit) => (u.kind === 'json' ? (u.raw?.length ?? 0) + 1 : u.bytes.length + 4);

export async function cmdReplay(ctx: Ctx): Promise<number> {
  if (!ctx.args.positional.length) throw new UsageError('no file or directory given', 'tds replay FILE|DIR ... (tds replay --help)');
  const o = optionsOf(ctx);
  let inputs;
  try {
    inputs = await listInputs(ctx.args.positional);
  } catch (err) {
    throw new UsageError(`cannot read ${(err as Error).message}`);
  }
  if (inputs.snapshots.length && (o.shiftTo !== 'none' || o.prefix)) {
    throw new UsageError('a snapshot directory is restored as it is: --shift-to and --service-prefix apply to OTLP recordings only', 'replay the OTLP files, or restore the snapshot without them');
  }
  const started = performance.now();
  const problems: Problem[] = [];
  let shiftNs = 0n;
  let startNs = 0n;
  if (o.shiftTo !== 'none' || o.speed !== null) {
    const range = await scan(inputs.files, o.signal);
    startNs = range.minNs;
    if (o.shiftTo !== 'none' && range.maxNs > 0n) {
      const targetUs = o.shiftTo === 'now' ? (ctx.io.now ?? Date.now)() * 1000 : o.shiftTo;
      shiftNs = BigInt(Math.round(targetUs)) * 1000n - range.maxNs;
      startNs += shiftNs;
    }
  }
  const sender = new Sender({ otlpUrl: o.otlpUrl, apiKey: ctx.apiKey, concurrency: o.concurrency, rate: o.rate, speed: o.speed, startNs, timeoutMs: ctx.timeoutMs });
  const state = { filesDone: 0, bytesDone: 0 };
  const progress = new Progress(ctx.io.stderr, () => ({ filesDone: state.filesDone, files: inputs.files.length, bytesDone: state.bytesDone, bytes: inputs.totalBytes, records: sender.total }));
  const problem = (p: Problem) => {
    problems.push(p);
    progress.problem(p);
  };
  let firstNs = 0n;
  let lastNs = 0n;
  let stopped: string | null = null;
  try {
    for (const file of inputs.files) {
      await readRecording(
        file,
        o.signal,
        async (u) => {
          state.bytesDone += bytesOf(u);
          let p: Prepared | null;
          try {
            p = prepare(u, shiftNs, o.prefix);
          } catch (err) {
            if (err instanceof JsonShapeError || err instanceof ProtoJsonError || err instanceof WireError) return problem({ file: u.file, line: u.at, error: err.message });
            throw err;
          }
          if (!p) return;
          if (p.minNs && (!firstNs || p.minNs < firstNs)) firstNs = p.minNs;
          if (p.maxNs > lastNs) lastNs = p.maxNs;
          await sender.send(p);
          progress.tick();
        },
        problem,
      );
      state.filesDone++;
    }
    await sender.drain();
  } catch (err) {
    if (!(err instanceof Unreachable)) throw err;
    stopped = err.message;
    await sender.drain().catch(() => {});
  }
  progress.done();
  const restored = [];
  for (const dir of inputs.snapshots) restored.push({ dir, ...(await restoreDir(ctx, dir)) });
  const seconds = (performance.now() - started) / 1000;
  const result = {
    files: inputs.files.length,
    records: sender.total,
    by_signal: sender.bySignal,
    requests: sender.requests,
    retries: sender.retries,
    rejected: sender.rejections(),
    malformed: problems.slice(0, MAX_LISTED),
    malformed_count: problems.length,
    shift_us: Number(shiftNs / 1000n),
    ...(firstNs ? { first_ts: Number(firstNs / 1000n), first_iso: isoFromUs(Number(firstNs / 1000n)) } : {}),
    ...(lastNs > 0n ? { last_ts: Number(lastNs / 1000n), last_iso: isoFromUs(Number(lastNs / 1000n)) } : {}),
    otlp_url: o.otlpUrl,
    seconds: Math.round(seconds * 1000) / 1000,
    records_per_s: seconds > 0 ? Math.round(sender.total.acknowledged / seconds) : 0,
    ...(restored.length ? { snapshots: restored } : {}),
    ...(stopped ? { stopped } : {}),
  };
  print(ctx.io, result);
  const clean = !stopped && !problems.length && sender.total.rejected === 0 && restored.every((r) => r.ok);
  return clean ? EXIT_OK : EXIT_ERROR;
}
