// Reader of the Nezha research format (Yu et al., FSE 2023): per day, `<day>-fault_list.json`,
// `trace/HH_MM_trace.csv.gz` (spans of about a minute ending near HH:MM:19), `log/HH_MM_log.csv.gz`
// (container-runtime JSON lines around the application's own) and `metric/<pod>_metric.csv` (per pod,
// once a minute). A pod's service is its name less the last two dash-separated parts. The
// published per-fault ranks come from the method's own run log. Any directory of this shape works
// (EVAL_RECORDED_DIR): a recording of another system in the same format needs no code.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GenLog, GenMetric, GenSpan, ScenarioData } from '../../testkit/scenario/traffic.js';
import { readCsv } from './csv.js';
import type { RecordedFault, Recording, RecordingSplit } from './recording.js';

const MINUTE_US = 60_000_000;
/** Metric points per chunk once the minute files are sent. */
const CHUNK_METRICS = 20_000;

export const serviceOfPod = (pod: string): string => pod.split('-').slice(0, -2).join('-') || pod;

const utcUs = (day: string, hms: string): number => Date.parse(`${day}T${hms}Z`) * 1000;

interface FaultEntry {
  inject_time: string;
  inject_timestamp: string;
  inject_pod: string;
  inject_type: string;
}

/** Per fault in the run log's order: `<time> Inject Ground Truth: <pod>, <type>` then, when ranked, the same line with ` score N`. */
function publishedRanks(dir: string): Map<string, (number | null)[]> {
  const out = new Map<string, (number | null)[]>();
  const resultsDir = join(dir, 'nezha-results');
  if (!existsSync(resultsDir)) return out;
  for (const f of readdirSync(resultsDir).filter((n) => n.endsWith('.log'))) {
    const re = /(\d{4}-\d\d-\d\d) \d\d:\d\d:\d\d Inject Ground Truth: (\S+), (\S+?)(?: score (\d+))?$/;
    for (const line of readFileSync(join(resultsDir, f), 'utf8').split('\n')) {
      const m = re.exec(line.trim());
      if (!m) continue;
      const key = `${m[1]}|${m[2]}|${m[3]}`;
      const list = out.get(key) ?? [];
      if (m[4] === undefined) list.push(null);
      else list[list.length - 1] = Number(m[4]);
      out.set(key, list);
    }
  }
  return out;
}

interface SourceFile {
  path: string;
  kind: 'trace' | 'log';
  startUs: number;
  endUs: number;
}

/** `HH_MM_<kind>.csv.gz` holds about the minute before HH:MM:19. */
function minuteFiles(day: string, dir: string, kind: 'trace' | 'log'): SourceFile[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => /^\d\d_\d\d_/.test(n) && n.endsWith('.csv.gz'))
    .map((n) => {
      const endUs = utcUs(day, `${n.slice(0, 2)}:${n.slice(3, 5)}:19`);
      return { path: join(dir, n), kind, startUs: endUs - MINUTE_US, endUs };
    });
}

/**
 * A metric row's time: its `Time` text (`2022-08-22 03:51:19.799 +0000 UTC m=+0.3`), which the
 * recording writes reliably; its `TimeStamp` seconds only when the text does not parse (one row of
 * nezha-ob has a TimeStamp two years off).
 */
function rowUs(rec: Record<string, string>): number {
  const m = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(\.\d+)?/.exec(rec['Time'] ?? '');
  if (m) return Date.parse(`${m[1]}T${m[2]}Z`) * 1000 + Math.floor(Number(m[3] ?? 0) * 1e6);
  return Number(rec['TimeStamp']) * 1e6;
}

const unitOf = (header: string): { name: string; unit: string } => {
  const m = /^(.*?)\((.*)\)$/.exec(header);
  return m ? { name: m[1]!, unit: m[2]! } : { name: header, unit: '' };
};

/** Every pod's per-minute gauges (and the entry's service-level ones) of a day, in time order. */
async function dayMetrics(metricDir: string, resources: ScenarioData['resources']): Promise<GenMetric[]> {
  const out: GenMetric[] = [];
  const files = readdirSync(metricDir).filter((n) => n.endsWith('_metric.csv') || n === 'front_service.csv');
  let entryPod: string | null = null;
  for (const n of files.filter((f) => f.endsWith('_metric.csv'))) {
    for await (const rec of readCsv(join(metricDir, n))) {
      const pod = rec['PodName']!;
      const service = serviceOfPod(pod);
      if (service === 'frontend') entryPod = pod;
      resources[pod] ??= { 'service.name': service, 'k8s.pod.name': pod };
      const timeUs = rowUs(rec) - MINUTE_US; // the point's time is the sample's
      for (const [col, v] of Object.entries(rec)) {
        if (col === 'Time' || col === 'TimeStamp' || col === 'PodName' || v === '') continue;
        const x = Number(v);
        if (!Number.isFinite(x)) continue;
        out.push({ service, resource: pod, ...unitOf(col), timeUs, gauge: x });
      }
    }
  }
  // The entry's success rate and latency percentiles, on the entry's pod.
  if (entryPod && files.includes('front_service.csv')) {
    for await (const rec of readCsv(join(metricDir, 'front_service.csv'))) {
      const timeUs = rowUs(rec) - MINUTE_US;
      for (const [col, v] of Object.entries(rec)) {
        if (col === 'Time' || col === 'TimeStamp' || col === 'ServiceName' || v === '') continue;
        const x = Number(v);
        if (Number.isFinite(x)) out.push({ service: 'frontend', resource: entryPod, ...unitOf(`Service${col}`), timeUs, gauge: x });
      }
    }
  }
  return out.sort((a, b) => a.timeUs - b.timeUs);
}

/** The application's line inside the container runtime's JSON (`{"log": "...\n", "stream", "time"}`). */
function appLine(raw: string): string {
  try {
    const o = JSON.parse(raw) as { log?: unknown };
    if (typeof o.log === 'string') return o.log.replace(/\r?\n$/, '');
  } catch {
    // not the runtime's JSON: the line as recorded
  }
  return raw;
}

async function readFileInto(f: SourceFile, data: ScenarioData): Promise<void> {
  for await (const r of readCsv(f.path)) {
    const pod = r['PodName'] ?? '';
    if (!pod) continue;
    const service = serviceOfPod(pod);
    data.resources[pod] ??= { 'service.name': service, 'k8s.pod.name': pod };
    if (f.kind === 'trace') {
      const startNs = BigInt(r['StartTimeUnixNano']!);
      const endNs = BigInt(r['EndTimeUnixNano']!);
      const span: GenSpan = {
        traceId: r['TraceID']!,
        spanId: r['SpanID']!,
        parentSpanId: r['ParentID'] && r['ParentID'] !== 'root' ? r['ParentID'] : null,
        service,
        resource: pod,
        name: r['OperationName']!,
        kind: 0, // the recording has no span kind
        startUs: Number(startNs / 1000n),
        durationUs: Math.max(0, Number((endNs - startNs) / 1000n)),
        error: false, // nor a status
        statusMessage: '',
        attributes: {},
        events: [],
      };
      data.spans.push(span);
    } else {
      const log: GenLog = {
        service,
        resource: pod,
        timeUs: Number(BigInt(r['TimeUnixNano']!) / 1000n),
        severityNumber: 0, // the level word is inside the line: the service finds it
        severityText: '',
        body: appLine(r['Log'] ?? ''),
        traceId: /^[0-9a-f]{32}$/.test(r['TraceID'] ?? '') ? r['TraceID']! : null,
        spanId: /^[0-9a-f]{16}$/.test(r['SpanID'] ?? '') ? r['SpanID']! : null,
      };
      data.logs.push(log);
    }
  }
}

function split(root: string, day: string, ranks: Map<string, (number | null)[]>): RecordingSplit {
  const dayDir = join(root, 'rca_data', day);
  const list = JSON.parse(readFileSync(join(dayDir, `${day}-fault_list.json`), 'utf8')) as Record<string, FaultEntry[]>;
  const seen = new Map<string, number>();
  const faults: RecordedFault[] = Object.keys(list)
    .sort()
    .flatMap((h) => list[h]!)
    .map((f) => {
      const key = `${day}|${f.inject_pod}|${f.inject_type}`;
      const i = seen.get(key) ?? 0;
      seen.set(key, i + 1);
      return {
        id: `${day}/${f.inject_time.slice(11)}`,
        split: day,
        injectUs: Number(f.inject_timestamp) * 1e6,
        service: serviceOfPod(f.inject_pod),
        type: f.inject_type,
        publishedRank: ranks.get(key)?.[i] ?? null,
      };
    });
  const files = [
    ...minuteFiles(day, join(dayDir, 'trace'), 'trace'),
    ...minuteFiles(day, join(root, 'construct_data', day, 'trace'), 'trace'), // a fault-free stretch of the same day
    ...minuteFiles(day, join(dayDir, 'log'), 'log'),
  ].sort((a, b) => a.startUs - b.startUs || a.kind.localeCompare(b.kind));
  const metricDir = join(dayDir, 'metric');
  const lastMetricUs = (() => {
    let last = 0;
    for (const n of readdirSync(metricDir).filter((f) => f.endsWith('_metric.csv'))) {
      const lines = readFileSync(join(metricDir, n), 'utf8').trimEnd().split('\n');
      const [time, ts] = lines[lines.length - 1]!.split(',');
      const us = rowUs({ Time: time ?? '', TimeStamp: ts ?? '' });
      if (Number.isFinite(us)) last = Math.max(last, us);
    }
    return last;
  })();
  const lastUs = Math.max(lastMetricUs, ...files.map((f) => f.endUs));
  return {
    name: day,
    faults,
    lastUs,
    async *chunks(opts = {}) {
      const keep = opts.keep;
      const keepPoint = (m: GenMetric) => !keep || keep(m.timeUs, m.timeUs + MINUTE_US);
      const resources: ScenarioData['resources'] = {};
      const metrics = await dayMetrics(metricDir, resources);
      const empty = (): ScenarioData => ({ resources, spans: [], logs: [], metrics: [], profiles: [] });
      let mi = 0;
      for (const f of files) {
        if (keep && !keep(f.startUs, f.endUs)) continue;
        const data = empty();
        for (; mi < metrics.length && metrics[mi]!.timeUs < f.startUs; mi++) if (keepPoint(metrics[mi]!)) data.metrics.push(metrics[mi]!);
        await readFileInto(f, data);
        yield data;
      }
      const rest = metrics.slice(mi).filter(keepPoint);
      for (let i = 0; i < rest.length; i += CHUNK_METRICS) yield { ...empty(), metrics: rest.slice(i, i + CHUNK_METRICS) };
    },
  };
}

/** The recording under `root` (a directory with `rca_data/<day>/`), one split a day. */
export function readNezha(root: string, name = 'nezha'): Recording {
  const ranks = publishedRanks(root);
  const days = readdirSync(join(root, 'rca_data'))
    .filter((d) => /^\d{4}-\d\d-\d\d$/.test(d))
    .sort();
  const splits = days.map((d) => split(root, d, ranks));
  const all = splits.flatMap((s) => s.faults);
  const ranked = all.filter((f) => f.publishedRank !== null);
  return {
    name,
    published: ranked.length
      ? {
          method: 'Nezha (FSE 2023), its own run with complete data',
          as1: all.filter((f) => f.publishedRank === 1).length / all.length,
          as3: all.filter((f) => (f.publishedRank ?? 99) <= 3).length / all.length,
          note: 'with every log minute, which this copy mostly lacks',
        }
      : null,
    splits,
  };
}
