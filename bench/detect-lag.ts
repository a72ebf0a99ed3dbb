// npm run bench:detect-lag — how long after a fault's onset its anomaly row is written, through the
// real pass on a real store as the scheduler runs it: a pass as each bucket's grace ends, as of that
// moment. A service of 20 operations with a daily cycle in traffic and latency gets three days of
// raw spans (closed by one pass), then a live day bucket by bucket, in which each operation has a
// fault of an hour (latency x3, or errors 1% -> 20%) starting at a random moment of a random bucket.
// The lag of a fault is the time of the first pass that wrote its row minus its onset: observed,
// not computed. Printed for the default grace and the others of 30 and 60 s.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/db.js';
import { createWriter } from '../src/store/writer.js';
import { openReadPool, readRows } from '../src/store/readers.js';
import { createDecodePool } from '../src/compute/pool.js';
import { runPass, type PassDeps } from '../src/detect/pass.js';
import { settingDefault } from '../src/core/config.js';
import { BUCKET_US, BUCKETS_PER_DAY } from '../src/core/time.js';
import { rng } from '../testkit/rng.js';

const OPS = 20;
const HISTORY_DAYS = 3;
const FAULT_BUCKETS = 12;

interface Fault {
  op: number;
  onsetUs: number;
  kind: 'latency' | 'errors';
}

async function run(graceS: number, seed: number): Promise<Array<{ kind: Fault['kind']; lag: number }>> {
  const dir = mkdtempSync(join(tmpdir(), 'tds-bench-lag-'));
  const store = await openStore(dir);
  const writer = createWriter(store, { flushIntervalMs: 5 });
  const reads = await openReadPool(store, { size: 2 });
  const pool = createDecodePool(2);
  try {
    const day0 = Math.floor(Date.now() * 1000 / BUCKET_US / BUCKETS_PER_DAY) * BUCKETS_PER_DAY - (HISTORY_DAYS + 2) * BUCKETS_PER_DAY;
    const live = day0 + HISTORY_DAYS * BUCKETS_PER_DAY;
    const r = rng(seed);
    const faults: Fault[] = Array.from({ length: OPS }, (_, op) => ({
      op,
      kind: op % 2 ? 'latency' : 'errors',
      onsetUs: (live + 12 + Math.floor(r() * (BUCKETS_PER_DAY - 36))) * BUCKET_US + Math.floor(r() * BUCKET_US),
    }));
    const faultTable = `(VALUES ${faults.map((f) => `(${f.op}, ${f.onsetUs}, ${f.kind === 'latency' ? 1 : 0})`).join(', ')}) AS f(op, onset, lat)`;
    // Spans of buckets [from, to): traffic and latency follow the day; a fault multiplies latency or raises errors after its onset.
    const spans = async (from: number, to: number) => {
      await store.writer.run(`SELECT setseed(${(seed % 997) / 1000})`);
      await store.writer.run(
        `INSERT INTO svc_spans (timestamp, service_name, trace_id, span_id, span_name, status_code, duration_us, operation, is_error) ` +
          `SELECT make_timestamp(ts), 'shop', md5(ts::VARCHAR || o), left(md5(ts::VARCHAR || o || 'x'), 16), 'GET /op/' || o, CASE WHEN err THEN 2 ELSE 0 END, dur, 'GET /op/' || o, err FROM (` +
          `SELECT t.o, t.ts, (20000 + 1000 * t.o) * exp(0.5 * sin(2 * pi() * (t.b % ${BUCKETS_PER_DAY}) / ${BUCKETS_PER_DAY})) * (0.9 + 0.2 * random()) * ` +
          `CASE WHEN f.lat = 1 AND t.ts >= f.onset AND t.ts < f.onset + ${FAULT_BUCKETS * BUCKET_US} THEN 3 ELSE 1 END AS dur, ` +
          `random() < CASE WHEN f.lat = 0 AND t.ts >= f.onset AND t.ts < f.onset + ${FAULT_BUCKETS * BUCKET_US} THEN 0.2 ELSE 0.01 END AS err FROM (` +
          `SELECT b, o, b * ${BUCKET_US} + i * ${BUCKET_US / 40} + o * 1000 AS ts FROM range(${from}, ${to}) u(b), range(${OPS}) v(o), range(40) w(i) ` +
          `WHERE i < 20 + 15 * sin(2 * pi() * (b % ${BUCKETS_PER_DAY}) / ${BUCKETS_PER_DAY})) AS t JOIN ${faultTable} ON f.op = t.o)`,
      );
      await store.writer.run(`INSERT OR IGNORE INTO svc_dirty_buckets SELECT range FROM range(${from}, ${to})`);
    };
    const deps: PassDeps = { store, writer, reads, pool, graceS, cache: new Map() };
    await spans(day0, live);
    await runPass(deps, { asOfUs: live * BUCKET_US, graceUs: 0 });
    const found = new Map<number, number>();
    for (let b = live; b < live + BUCKETS_PER_DAY - 12; b++) {
      await spans(b, b + 1);
      const wake = (b + 1) * BUCKET_US + graceS * 1_000_000;
      const rep = await runPass(deps, { asOfUs: wake });
      if (!rep.anomalies_written) continue;
      const rows = await reads.use((c) => readRows(c, `SELECT operation, signal, ts_shift_us FROM svc_anomalies WHERE ts_shift_us >= ${live * BUCKET_US}`));
      for (const f of faults) {
        if (found.has(f.op)) continue;
        const signal = f.kind === 'latency' ? 'latency_p95' : 'error_rate';
        const hit = rows.some((x) => x['operation'] === `GET /op/${f.op}` && x['signal'] === signal && Math.abs(Number(x['ts_shift_us']) - f.onsetUs) <= 2 * BUCKET_US);
        if (hit) found.set(f.op, (wake - f.onsetUs) / 60_000_000);
      }
    }
    return faults.map((f) => ({ kind: f.kind, lag: found.get(f.op) ?? NaN }));
  } finally {
    await pool.destroy();
    await reads.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const q = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;

async function main(): Promise<void> {
  const def = Number(settingDefault('SVC_DETECT_GRACE_S'));
  for (const grace of [...new Set([def, 30, 60])]) {
    const faults: Array<{ kind: string; lag: number }> = [];
    for (const seed of [1, 2, 3]) faults.push(...(await run(grace, seed)));
    const lags = faults.map((f) => f.lag);
    const got = lags.filter(Number.isFinite).sort((a, b) => a - b);
    const soon = (kind: string) => `${kind} ${faults.filter((f) => f.kind === kind && f.lag <= 10).length}/${faults.filter((f) => f.kind === kind).length}`;
    console.log(
      `grace ${grace} s${grace === def ? ' (default)' : ''}: ${got.length}/${lags.length} faults written; minutes from onset to row: ` +
        `min ${got[0]!.toFixed(1)}, median ${q(got, 0.5).toFixed(1)}, p90 ${q(got, 0.9).toFixed(1)}, max ${got[got.length - 1]!.toFixed(1)}; ` +
        `within 10 min: ${got.filter((x) => x <= 10).length}/${lags.length} (${soon('latency')}, ${soon('errors')})`,
    );
  }
}

await main();
