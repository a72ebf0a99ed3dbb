// A full disk during ingest, on a 64 MiB filesystem of the test's own. Senders keep posting OTLP/HTTP
// while a ballast file fills the disk: ingest must answer 507 (Retry-After, an error body with a
// hint) before any write fails, reads keep working, every acknowledged span is stored exactly once,
// and ingest resumes by itself once the ballast is deleted. When DuckDB or the spool runs out of
// space anyway (no margin), that request fails with 507, is not acknowledged, and the file survives
// (also a shutdown whose checkpoint cannot be written).
import { afterAll, expect, it } from 'vitest';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { encodeTraces, postOtlp, statusOf } from '../helpers/otlp.js';
import { logsJson } from '../../testkit/otlp-json.js';
import { queryStopped } from '../helpers/db.js';
import { clientFor, queryRows } from '../helpers/client.js';
import { fillLeaving, mountTmpfs } from '../helpers/tmpfs.js';

const MiB = 1024 * 1024;
// Recent timestamps: the server deletes data older than its retention (72 h) at start.
const NOW_US = Date.now() * 1000 - 60_000_000;
const disk = mountTmpfs('64m');
afterAll(() => disk.cleanup());

/** Waits for `cond`, failing (not hanging) when it does not come within `ms`. */
async function until(cond: () => boolean, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface Senders {
  /** Span ids (hex) of every batch answered 200. */
  acked: string[];
  /** Answers by status. */
  statuses: Map<number, number>;
  /** The bodies of answers other than 200 and 507, as text (a google.rpc.Status message is readable so). */
  failures: string[];
  stop(): Promise<void>;
}

/** `n` OTLP/HTTP senders posting batches of `spans` spans with fresh span ids until stopped. */
function startSenders(srv: TestServer, n: number, spans: number): Senders {
  const out: Senders = { acked: [], statuses: new Map(), failures: [], stop: async () => {} };
  let stopped = false;
  const one = async (k: number) => {
    while (!stopped) {
      const ids = Array.from({ length: spans }, () => randomBytes(8));
      const body = encodeTraces(`sender-${k}`, ids.map((spanId, i) => ({ spanId, startUs: NOW_US + i, durationUs: 100 + i, attributes: { i } })));
      const res = await postOtlp(srv.otlpHttp, 'traces', body);
      const answer = Buffer.from(await res.arrayBuffer());
      if (res.status !== 200 && res.status !== 507) out.failures.push(`${res.status} ${answer.toString('latin1')}`);
      out.statuses.set(res.status, (out.statuses.get(res.status) ?? 0) + 1);
      if (res.status === 200) out.acked.push(...ids.map((b) => b.toString('hex')));
      else await new Promise((r) => setTimeout(r, 20)); // refused: a sender backs off a little
    }
  };
  const running = Array.from({ length: n }, (_v, k) => one(k));
  out.stop = async () => {
    stopped = true;
    await Promise.all(running);
  };
  return out;
}

const count = (s: Senders, status: number) => s.statuses.get(status) ?? 0;

/** Log lines of `SHAPES` shapes (their word counts differ), each its own template. */
const SHAPES = 150;
const shape = (k: number) => `job ${'step '.repeat(1 + (k % SHAPES))}finished`;

/** A sender of log batches, a new shape (a new template) each batch until every shape was sent once. */
function startLogSender(srv: TestServer): { statuses: Map<number, number>; stop(): Promise<void> } {
  const statuses = new Map<number, number>();
  let stopped = false;
  const run = (async () => {
    for (let k = 0; !stopped; k++) {
      const res = await postOtlp(srv.otlpHttp, 'logs', logsJson('logger', Array.from({ length: 5 }, (_v, i) => ({ timeUs: NOW_US + i, body: shape(k) }))));
      await res.arrayBuffer();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return {
    statuses,
    stop: async () => {
      stopped = true;
      await run;
    },
  };
}

/** Every acknowledged span is in the stopped server's file exactly once. */
async function expectStoredOnce(dataDir: string, acked: readonly string[]): Promise<void> {
  const rows = await queryStopped(dataDir, 'SELECT span_id, count(*) AS n FROM svc_spans GROUP BY span_id');
  const stored = new Map(rows.map((r) => [String(r['span_id']), Number(r['n'])]));
  const missing = acked.filter((id) => stored.get(id) !== 1);
  expect(missing.length, `acknowledged spans not stored exactly once (${missing.slice(0, 3).join(', ')}…)`).toBe(0);
  expect([...stored.values()].every((n) => n === 1)).toBe(true);
}

async function post(srv: TestServer, path: string, body: string): Promise<Response> {
  return fetch(`${srv.api}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
}

// Skipped where the test cannot mount its own small filesystem (not root, or the container forbids
// mount): filling the machine's real disk instead would be unsafe. The reason is in disk.refused.
it.skipIf(disk.refused !== null)('answers 507 before a write fails, keeps reads and acknowledged spans, and resumes when space is freed', async () => {
  const dataDir = join(disk.dir, 'margin');
  mkdirSync(dataDir);
  const ballast = join(disk.dir, 'ballast-margin');
  const srv = await startTestServer({ SVC_MIN_FREE_DISK_BYTES: String(16 * MiB) }, dataDir);
  const senders = startSenders(srv, 4, 200);
  try {
    await until(() => senders.acked.length >= 4_000, 'spans acknowledged before the disk fills');
    fillLeaving(disk.dir, ballast, 8 * MiB); // below the 16 MiB margin, with room for what is in flight
    await until(() => count(senders, 507) >= 20, 'senders refused with 507');

    const refused = await postOtlp(srv.otlpHttp, 'traces', encodeTraces('probe', [{ startUs: NOW_US, durationUs: 1 }]));
    expect(refused.status).toBe(507);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const st = statusOf(refused.headers.get('content-type'), new Uint8Array(await refused.arrayBuffer()));
    expect(st.code).toBe(14); // UNAVAILABLE: retryable
    expect(st.message).toMatch(/SVC_MIN_FREE_DISK_BYTES/);
    expect(st.message).toMatch(/free disk space/); // the hint

    // Reads keep working while ingest is refused.
    const [q] = await queryRows(clientFor(srv.api), 'SELECT count(*) AS n FROM svc_spans');
    expect(Number(q!['n'])).toBeGreaterThanOrEqual(1000);
    const d = await post(srv, '/v1/diagnose', JSON.stringify({ services: ['sender-0'] }));
    expect(d.status).toBe(200);
    // Refused before the disk ran out: no commit failed.
    const status = (await (await fetch(`${srv.api}/admin/status`)).json()) as { status: { ingest: { failedCommits: number } } };
    expect(status.status.ingest.failedCommits).toBe(0);

    rmSync(ballast);
    const before = senders.acked.length;
    await until(() => senders.acked.length >= before + 2_000, 'ingest accepted again after the ballast was deleted');
    expect(srv.child.exitCode).toBeNull(); // the same process: no restart was needed
    await senders.stop();
    expect([...senders.statuses.keys()].sort()).toEqual([200, 507]);
  } finally {
    await senders.stop();
    rmSync(ballast, { force: true });
    expect(await srv.stop()).toBe(0);
  }
  await expectStoredOnce(dataDir, senders.acked);
  console.log(`disk-full (margin): ${senders.acked.length} acknowledged spans checked, ${count(senders, 507)} answers 507, no commit failed`);
});

it.skipIf(disk.refused !== null)('a commit that runs out of space anyway answers 507, is not acknowledged, and the file survives a shutdown on a full disk', async () => {
  const dataDir = join(disk.dir, 'nomargin');
  mkdirSync(dataDir);
  const ballast = join(disk.dir, 'ballast-nomargin');
  // A margin of one byte: only a write that fails can stop ingest.
  const srv = await startTestServer({ SVC_MIN_FREE_DISK_BYTES: '1' }, dataDir);
  const senders = startSenders(srv, 4, 2_000);
  const logs = startLogSender(srv);
  let restarted: TestServer | null = null;
  try {
    await until(() => senders.acked.length >= 20_000, 'spans acknowledged before the disk fills');
    fillLeaving(disk.dir, ballast, 512 * 1024);
    await until(() => count(senders, 507) >= 10, 'commits failing for want of space answered 507');
    await logs.stop();
    expect(senders.failures).toEqual([]);
    expect(logs.statuses.get(507)).toBeGreaterThan(0);
    // Reads keep working on a full disk.
    expect((await clientFor(srv.api).runQuery({ body: 'SELECT count(*) AS n FROM svc_spans' })).status).toBe(200);
    await senders.stop();
    // Room again, same process: every shape again, those whose first batch failed for want of space included.
    rmSync(ballast);
    const shapes = logsJson('logger', Array.from({ length: SHAPES }, (_v, k) => ({ timeUs: NOW_US, body: shape(k) })));
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await postOtlp(srv.otlpHttp, 'logs', shapes)).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(200);
    fillLeaving(disk.dir, ballast, 0);
    // Stopped while the disk is still full: its checkpoint cannot be written. It must not corrupt the
    // file: what was acknowledged is in the WAL and replayed at the next start.
    expect(await srv.stop()).toBe(0); // its failed checkpoint is logged, not fatal
    rmSync(ballast);
    restarted = await startTestServer({ SVC_MIN_FREE_DISK_BYTES: '1' }, dataDir);
    const res = await postOtlp(restarted.otlpHttp, 'traces', encodeTraces('after', [{ spanId: randomBytes(8), startUs: NOW_US, durationUs: 1 }]));
    expect(res.status).toBe(200);
  } finally {
    await senders.stop();
    await logs.stop();
    rmSync(ballast, { force: true });
    if (restarted) expect(await restarted.stop()).toBe(0);
    else await srv.stop();
  }
  await expectStoredOnce(dataDir, senders.acked);
  const after = await queryStopped(dataDir, "SELECT count(*) AS n FROM svc_spans WHERE service_name = 'after'");
  expect(Number(after[0]!['n'])).toBe(1);
  // A template first seen in a batch that could not be committed is written with the next one that is.
  const orphans = await queryStopped(dataDir, 'SELECT count(*) AS n FROM svc_logs WHERE template_id NOT IN (SELECT template_id FROM svc_log_templates)');
  expect(Number(orphans[0]!['n'])).toBe(0);
  console.log(`disk-full (no margin): ${senders.acked.length} acknowledged spans checked, ${count(senders, 507)} span and ${logs.statuses.get(507)} log answers 507, none 500/503`);
});
