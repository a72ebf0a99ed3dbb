// The read path resolves merges: lines mined before their template merged into another (a chain of
// merges, even) group as one event through svc_logs_resolved, on a real store file, through the same
// guard and connection as POST /v1/query. The rows are the ones the miner returned, stored as ingest
// stores them (template rows upserted: the latest row of an id wins).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMiner, type TemplateRow } from '../../../src/pipeline/logminer/index.js';
import { prepareQueryConnection } from '../../../src/query/connection.js';
import { checkSelect } from '../../../src/query/guard.js';
import { runQuery } from '../../../src/query/run.js';
import { openStore, type Store } from '../../../src/store/db.js';
import { sqlString } from '../../../src/store/sql.js';
import { LOG_TEMPLATES } from '../../../src/store/schema.js';
import { STATEMENTS as S, type Bounds } from '../../../src/diagnose/reads/index.js';
import { readRows } from '../../../src/store/readers.js';

// Three events. "copied": five file-set names make the position a variable (four templates merge into
// the first), then that template, of five tokens, merges into the six-token one that reached the
// same skeleton: a chain of merges. "Job": two enum-like states, kept apart.
const LINES = [
  'copied 1 files to alpha',
  'copied 2 files to beta',
  'copied 3 4 files to archive',
  'copied 5 files to gamma',
  'Job 7 Started',
  'copied 6 files to delta',
  'copied 7 files to epsilon',
  'Job 8 Stopped',
  'copied 8 files to zeta', // the sixth word: copied <*> files to <*>, the other four merge into it
  'copied 2 9 files to tmp-3', // the six-token template generalises to the same skeleton: the five-token one merges into it
  'Job 9 Started',
];

const T0 = 1_700_000_000_000_000;

let dir: string;
let store: Store;
let q: DuckDBConnection;
let ids: number[];
let rows: Map<number, TemplateRow>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tds-resolved-'));
  store = await openStore(dir);
  const m = createMiner();
  const r = m.mineBatch('svc', LINES);
  ids = Array.from(r.templateIds);
  rows = new Map<number, TemplateRow>();
  for (const row of [...r.changed, ...m.drainDirty(), ...r.evicted]) rows.set(row.template_id, row);
  const w = store.writer;
  const v = (x: unknown): string => (x === null ? 'NULL' : typeof x === 'string' ? sqlString(x) : String(x));
  for (const row of rows.values()) {
    const cols = LOG_TEMPLATES.columns.map((c) => c.name);
    const vals = cols.map((c) => (c === 'timestamp' || c === 'first_seen' || c === 'last_seen'
      ? `make_timestamp(${c === 'last_seen' ? row.last_seen : row.first_seen})`
      : v((row as unknown as Record<string, unknown>)[c])));
    await w.run(`INSERT OR REPLACE INTO ${LOG_TEMPLATES.name} (${cols.join(', ')}) VALUES (${vals.join(', ')})`);
  }
  for (let i = 0; i < LINES.length; i++) {
    await w.run(
      `INSERT INTO svc_logs (timestamp, service_name, body, is_error, template_id, template_params) ` +
        `VALUES (make_timestamp(${T0 + i}), 'svc', ${sqlString(LINES[i]!)}, ${LINES[i]!.startsWith('Job')}, ${ids[i]}, '["${i}"]')`,
    );
  }
  q = await prepareQueryConnection(store, { spoolDir: store.spoolDir });
});

afterAll(async () => {
  q?.closeSync();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function query(sql: string): Promise<Record<string, unknown>[]> {
  const g = await checkSelect(q, sql);
  expect(g.ok, JSON.stringify(g)).toBe(true);
  return runQuery(q, sql, { timeoutMs: 10_000, rowCap: 1000 });
}

describe('svc_logs_resolved', () => {
  it('the input made a chain of merges (so the view has something to resolve)', () => {
    const into = (id: number) => rows.get(id)!.merged_into;
    const beta = ids[1]!;
    const first = ids[0]!;
    const six = ids[2]!;
    expect(into(beta)).toBe(first);
    expect(into(first)).toBe(six);
    expect(into(six)).toBeNull();
    expect(new Set(ids.filter((_, i) => LINES[i]!.startsWith('copied'))).size).toBeGreaterThan(2);
  });

  it('GROUP BY resolved_template_id counts each event once, through the /v1/query guard', async () => {
    const got = await query(
      `SELECT t.pattern, count(*) AS n FROM svc_logs_resolved AS l JOIN svc_log_templates AS t ON t.template_id = l.resolved_template_id GROUP BY ALL ORDER BY n DESC, t.pattern`,
    );
    expect(got).toEqual([
      { pattern: 'copied <*> <*> files to <*>', n: 8 },
      { pattern: 'Job <*> Started', n: 2 },
      { pattern: 'Job <*> Stopped', n: 1 },
    ]);
  });

  it('keeps template_id as ingested and every svc_logs column', async () => {
    const got = await query(`SELECT template_id, resolved_template_id, body FROM svc_logs_resolved ORDER BY timestamp`);
    expect(got.map((r) => r.template_id)).toEqual(ids);
    expect(new Set(got.slice(0, 4).map((r) => r.resolved_template_id))).toEqual(new Set([ids[2]]));
    const cols = await query(`SELECT * FROM svc_logs_resolved LIMIT 1`);
    expect(Object.keys(cols[0]!)).toContain('template_params');
  });
});

describe('the README example', () => {
  it('passes the /v1/query guard and runs', async () => {
    const sql =
      "SELECT l.resolved_template_id, any_value(t.pattern) AS pattern, count(*) AS n FROM svc_logs_resolved AS l JOIN svc_log_templates AS t ON t.template_id = l.resolved_template_id " +
      "WHERE l.timestamp >= TIMESTAMP '2023-11-14 00:00:00' GROUP BY 1 ORDER BY n DESC LIMIT 20";
    const got = await query(sql);
    expect(got.map((r) => [r.pattern, r.n])).toEqual([['copied <*> <*> files to <*>', 8], ['Job <*> Started', 2], ['Job <*> Stopped', 1]]);
  });
});

describe('the diagnosis reads by raw template_id and resolves the merges itself', () => {
  const b: Bounds = { from: T0 - 1_000_000, to: T0 + 1_000_000, lookFrom: T0 - 2_000_000, newSince: T0 - 1_000_000 };
  const windowLogs = async () => (await readRows(q, S.windowLogs.sql(b))).map(S.windowLogs.decode);

  it('windowLogs counts each event once, as svc_logs_resolved does, and names the templates merged into it', async () => {
    const want = await query(`SELECT resolved_template_id AS id, count(*) AS n, count_if(is_error) AS k FROM svc_logs_resolved GROUP BY ALL ORDER BY id`);
    const got = (await windowLogs()).sort((x, y) => x.template_id! - y.template_id!);
    expect(got.map((r) => [r.template_id, r.n, r.k])).toEqual(want.map((r) => [Number(r.id), Number(r.n), Number(r.k)]));
    // the merged event spans the first to the last of its lines, whichever template they got at ingest
    const copied = got.find((r) => r.template_id === ids[2])!;
    expect([copied.first_us, copied.last_us]).toEqual([T0, T0 + 9]);
    const copiedIds = new Set(ids.filter((_, i) => LINES[i]!.startsWith('copied')));
    expect(new Set([...copied.merged_ids!, ids[2]])).toEqual(copiedIds);
    expect(got.find((r) => r.template_id === ids[4])!.merged_ids).toEqual([]);
  });

  it('templateParams reads the lines of the templates merged into the ids asked, newest first per event', async () => {
    const rows = await windowLogs();
    const six = ids[2]!;
    const started = ids[4]!;
    const mergedInto = new Map<number, number>();
    for (const r of rows) for (const from of r.merged_ids ?? []) mergedInto.set(from, r.template_id!);
    const params = async (asked: number[], per: number) =>
      (await readRows(q, S.templateParams.sql(b, [{ service: 'svc', from: b.to - 10_000_000 }], asked, per, mergedInto))).map(S.templateParams.decode);
    const all = await params([six, started], 200);
    expect(all.filter((r) => r.template_id === six).length).toBe(8);
    expect(all.filter((r) => r.template_id === started).length).toBe(2);
    expect(all.length).toBe(10);
    const newest = await params([six], 3);
    expect(newest.map((r) => r.template_params).sort()).toEqual(['["6"]', '["8"]', '["9"]']);
    expect(newest.every((r) => r.template_id === six)).toBe(true);
  });
});
