// `tds snapshot` → `tds restore` into a fresh server gives the same /v1/query answers for every
// table (and the same anomalies, alerts, services and diagnoses); the files are zstd Parquet that
// plain DuckDB opens; a second restore stores nothing twice; template ids the target already uses
// for other templates are renumbered consistently (and the miner keeps using them); one tenant's
// snapshot neither reads nor writes another's; bad archives are refused with nothing stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { gaugeJson, logsJson, tracesJson } from '../../testkit/otlp-json.js';
import { postOtlp } from '../helpers/otlp.js';
import { bearer, createTenant, issueKey, startHosted } from '../helpers/hosted.js';
import { writeTar } from '../../src/core/tar.js';
import { sha256 } from '../../src/api/snapshot-manifest.js';
import { QUERYABLE_TABLES } from '../../src/store/schema.js';
import { sqlTimestamp } from '../../src/store/sql.js';
import { B, BUCKETS, SHIFT_AT, history } from '../../testkit/incident.js';
import { ALL_TIME, cli, rows } from './cli.js';

// Detection runs only when the test asks (tds detect): scheduled passes run at each bucket's grace as
// well as every interval, and one between two steps would close buckets a comparison expects open.
// With a day's grace they close none of the data, which spans two hours.
const ENV = { SVC_DETECT_INTERVAL_S: '3600', SVC_DETECT_GRACE_S: '86400', SVC_QUERY_ROW_CAP: '200000' };
const first = Math.floor((Date.now() * 1000) / B) - BUCKETS - 3;
const fromTs = first * B;
const toTs = (first + BUCKETS + 1) * B;
const dir = mkdtempSync(join(tmpdir(), 'tds-snapshot-'));
const recording = join(dir, 'history.jsonl');
const snap = join(dir, 'snap');

/** An OTLP/JSON profiles request (replayed as protobuf): two samples of one stack. */
const profilesLine = (service: string, atUs: number) =>
  JSON.stringify({
    resourceProfiles: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
        scopeProfiles: [{ profiles: [{ sampleType: { typeStrindex: 1, unitStrindex: 2 }, timeUnixNano: String(BigInt(atUs) * 1000n), durationNano: '10000000000', samples: [{ stackIndex: 0, values: ['5000000'] }, { stackIndex: 1, values: ['7000000'] }] }] }],
      },
    ],
    dictionary: {
      stringTable: ['', 'cpu', 'nanoseconds', 'main', 'charge', 'encrypt'],
      functionTable: [{ nameStrindex: 3 }, { nameStrindex: 4 }, { nameStrindex: 5 }],
      locationTable: [{ lines: [{ functionIndex: 0 }] }, { lines: [{ functionIndex: 1 }] }, { lines: [{ functionIndex: 2 }] }],
      stackTable: [{ locationIndices: [1, 0] }, { locationIndices: [2, 1, 0] }],
    },
  });

let source: TestServer;
let fresh: TestServer;
let snapshotOut: any;
let restoreOut: any;

/** Every row of a queryable table in the window, in one order. */
const tableRows = (srv: TestServer, table: string) => {
  const where = table === 'svc_services' ? `last_seen >= TIMESTAMP '2000-01-01'` : ALL_TIME;
  return rows(srv.api, `SELECT * FROM ${table} WHERE ${where} ORDER BY ALL`);
};
const get = async (srv: TestServer, path: string) => (await fetch(srv.api + path)).json();

beforeAll(async () => {
  for (const req of history(first)) appendFileSync(recording, req.body + '\n');
  appendFileSync(recording, profilesLine('payments', (first + 5) * B + 1000) + '\n');
  appendFileSync(recording, gaugeJson('checkout', 'queue.depth', [{ timeUs: (first + 3) * B, value: 4 }, { timeUs: (first + 20) * B, value: 40 }]) + '\n');
  source = await startTestServer(ENV);
  expect((await cli(['replay', recording, '--url', source.api, '--otlp-url', source.otlpHttp])).code).toBe(0);
  // Detect as of two buckets before the end: anomalies, alerts, detector states, and two open buckets.
  expect((await cli(['detect', '--until-idle', '--as-of', String((first + BUCKETS - 2) * B), '--url', source.api])).code).toBe(0);
  const s = await cli(['snapshot', '--from-ts', String(fromTs), '--to-ts', String(toTs), '--url', source.api, snap]);
  expect(s.code, JSON.stringify(s.out)).toBe(0);
  snapshotOut = s.out;
  fresh = await startTestServer(ENV);
  const r = await cli(['restore', snap, '--url', fresh.api]);
  expect(r.code, JSON.stringify(r.out)).toBe(0);
  restoreOut = r.out;
}, 120_000);

afterAll(async () => {
  for (const s of [source, fresh]) {
    await s?.stop();
    s?.cleanup();
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('tds snapshot', () => {
  it('writes one Parquet file per table and a manifest with counts and checksums', () => {
    const manifest = JSON.parse(readFileSync(join(snap, 'manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({ format: 'tds-snapshot', version: 1, schema_version: 1, window: { from_ts: fromTs, to_ts: toTs }, services: null, compression: 'zstd' });
    expect(readdirSync(snap).sort()).toEqual(['manifest.json', ...manifest.tables.map((t: { file: string }) => t.file)].sort());
    for (const t of manifest.tables) {
      const data = readFileSync(join(snap, t.file));
      expect(data.length, t.name).toBe(t.bytes);
      expect(sha256(data), t.name).toBe(t.sha256);
    }
    const rowsOf = (name: string) => manifest.tables.find((t: { name: string }) => t.name === name).rows;
    expect(rowsOf('svc_spans')).toBe(BUCKETS * 60 * 3);
    expect(rowsOf('svc_anomalies')).toBeGreaterThan(0);
    expect(rowsOf('svc_profiles')).toBe(2);
    expect(rowsOf('svc_dirty_buckets')).toBe(2);
    expect(snapshotOut.rows).toBe(manifest.tables.reduce((a: number, t: { rows: number }) => a + t.rows, 0));
  });

  it('holds as many rows per table as /v1/query counts in the window', async () => {
    const manifest = JSON.parse(readFileSync(join(snap, 'manifest.json'), 'utf8'));
    const window = `timestamp >= ${sqlTimestamp(fromTs)} AND timestamp < ${sqlTimestamp(toTs)}`;
    for (const t of QUERYABLE_TABLES.filter((x) => x.name !== 'svc_services' && x.name !== 'svc_log_templates')) {
      const [n] = await rows(source.api, `SELECT count(*) AS n FROM ${t.name} WHERE ${window}`);
      expect(manifest.tables.find((x: { name: string }) => x.name === t.name).rows, t.name).toBe(Number(n!['n']));
    }
  });

  it('writes zstd Parquet that plain DuckDB reads as it is', async () => {
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    try {
      const manifest = JSON.parse(readFileSync(join(snap, 'manifest.json'), 'utf8'));
      for (const t of manifest.tables) {
        const path = join(snap, t.file).replace(/'/g, "''");
        const n = (await c.runAndReadAll(`SELECT count(*) FROM read_parquet('${path}')`)).getRows()[0]![0];
        expect(Number(n), t.name).toBe(t.rows);
        const cols = (await c.runAndReadAll(`SELECT column_name FROM (DESCRIBE SELECT * FROM read_parquet('${path}'))`)).getRows().map((r) => r[0]);
        expect(cols, t.name).toEqual(t.columns.map((x: { name: string }) => x.name));
      }
      const codecs = (await c.runAndReadAll(`SELECT DISTINCT compression FROM parquet_metadata('${join(snap, 'svc_spans.parquet')}')`)).getRows().map((r) => r[0]);
      expect(codecs).toEqual(['ZSTD']);
    } finally {
      c.closeSync();
      db.closeSync();
    }
  });
});

describe('tds restore into a fresh server', () => {
  it('stores every row of the snapshot', () => {
    for (const [name, t] of Object.entries(restoreOut.tables as Record<string, { rows: number; inserted: number; duplicates: number }>)) {
      if (name === 'svc_services') continue;
      expect(t, name).toEqual({ rows: t.rows, inserted: t.rows, duplicates: 0 });
    }
    expect(restoreOut.templates_renumbered).toBe(0);
  });

  it('answers /v1/query the same for every queryable table', async () => {
    for (const t of QUERYABLE_TABLES) expect(await tableRows(fresh, t.name), t.name).toEqual(await tableRows(source, t.name));
    expect(await rows(fresh.api, `SELECT * FROM svc_logs_resolved WHERE ${ALL_TIME} ORDER BY ALL`)).toEqual(await rows(source.api, `SELECT * FROM svc_logs_resolved WHERE ${ALL_TIME} ORDER BY ALL`));
  });

  it('answers the same anomalies, alerts, services and diagnoses', async () => {
    const q = `/v1/anomalies?from_ts=${fromTs}&to_ts=${toTs}`;
    expect(await get(fresh, q)).toEqual(await get(source, q));
    // Alerts that started at the same time come in any order.
    const alerts = async (srv: TestServer) => ((await get(srv, '/v1/alerts')) as { alerts: { fingerprint: string }[] }).alerts.sort((a, b) => a.fingerprint.localeCompare(b.fingerprint));
    expect(await alerts(fresh)).toEqual(await alerts(source));
    expect(await get(fresh, '/v1/services')).toEqual(await get(source, '/v1/services'));
    const body = JSON.stringify({ services: ['payments', 'checkout'], from_ts: (first + SHIFT_AT - 2) * B, to_ts: (first + BUCKETS) * B });
    const diag = (s: TestServer) => fetch(`${s.api}/v1/diagnose`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then((r) => r.json());
    expect(await diag(fresh)).toEqual(await diag(source));
  });

  it('stores nothing twice when restored again', async () => {
    const again = await cli(['restore', snap, '--url', fresh.api]);
    expect(again.code).toBe(0);
    for (const [name, t] of Object.entries(again.out.tables as Record<string, { rows: number; inserted: number; duplicates: number }>)) {
      // svc_dirty_buckets is a work queue: a scheduled detection pass at a bucket's end between the
      // two restores empties it, and the second restore then marks those buckets again (CI, once).
      if (name !== 'svc_services' && name !== 'svc_dirty_buckets') expect(t, name).toEqual({ rows: t.rows, inserted: 0, duplicates: t.rows });
    }
    for (const t of QUERYABLE_TABLES) expect(await tableRows(fresh, t.name), t.name).toEqual(await tableRows(source, t.name));
  });

  it('keeps the buckets the source had not closed open, and closes them like the source does', async () => {
    const [a, b] = await Promise.all([cli(['detect', '--url', source.api]), cli(['detect', '--url', fresh.api])]);
    expect(b.out).toMatchObject({ buckets_closed: 2, anomalies_written: a.out.anomalies_written });
    for (const t of ['svc_series_5m', 'svc_anomalies']) {
      const strip = (r: Record<string, unknown>[]) => r.map(({ detected_at: _, ...x }) => x);
      expect(strip(await tableRows(fresh, t)), t).toEqual(strip(await tableRows(source, t)));
    }
  });
});

describe('tds restore into a store that has data of its own', () => {
  it('renumbers template ids the store uses for other templates, in the logs too, and the miner keeps them', async () => {
    const other = await startTestServer(ENV);
    try {
      // The store's own templates take ids 1, 2, ... first.
      const t0 = (first + 1) * B;
      const own = logsJson('inventory', [0, 1, 2].map((i) => ({ timeUs: t0 + i, body: i === 2 ? `restock of sku ${i} failed` : `stock level ${i} read` })));
      expect((await postOtlp(other.otlpHttp, 'logs', own)).status).toBe(200);
      const r = await cli(['restore', snap, '--url', other.api]);
      expect(r.code, JSON.stringify(r.out)).toBe(0);
      expect(r.out.templates_renumbered).toBeGreaterThan(0);
      // The store's own lines share a bucket with restored ones: that bucket is left to the detection pass to rebuild.
      expect(r.out.buckets_reopened).toBe(1);
      expect(r.out.tables.svc_logs).toMatchObject({ inserted: r.out.tables.svc_logs.rows, duplicates: 0 });
      // Every log line names a template of its own service, with the pattern it had in the source.
      const bothBounded = `l.timestamp >= TIMESTAMP '2000-01-01' AND l.timestamp < TIMESTAMP '2100-01-01' AND t.timestamp >= TIMESTAMP '2000-01-01'`;
      const patterns = `SELECT l.service_name, t.pattern, count(*) AS n FROM svc_logs l JOIN svc_log_templates t USING (template_id) WHERE ${bothBounded} GROUP BY ALL ORDER BY ALL`;
      const got = await rows(other.api, patterns);
      expect(got.filter((x) => x['service_name'] !== 'inventory')).toEqual(await rows(source.api, patterns));
      expect(await rows(other.api, `SELECT count(*) AS n FROM svc_logs l JOIN svc_log_templates t USING (template_id) WHERE ${bothBounded} AND l.service_name <> t.service_name`)).toEqual([{ n: 0 }]);
      // A new line of a restored event gets the restored (renumbered) id, not a new template.
      const [before] = await rows(other.api, `SELECT template_id FROM svc_log_templates WHERE timestamp >= TIMESTAMP '2000-01-01' AND service_name = 'payments' AND pattern LIKE 'charge <*> ok'`);
      expect((await postOtlp(other.otlpHttp, 'logs', logsJson('payments', [{ timeUs: (first + 30) * B, body: 'charge 77 ok' }]))).status).toBe(200);
      const [line] = await rows(other.api, `SELECT template_id FROM svc_logs WHERE timestamp = ${sqlTimestamp((first + 30) * B)}`);
      expect(line).toEqual(before);
    } finally {
      await other.stop();
      other.cleanup();
    }
  });
});

describe('overlapping snapshots', () => {
  it('restored one after the other, store their union once', async () => {
    const target = await startTestServer(ENV);
    try {
      const a = join(dir, 'early');
      const b = join(dir, 'late');
      expect((await cli(['snapshot', '--from-ts', String(fromTs), '--to-ts', String((first + 12) * B), '--url', source.api, a])).code).toBe(0);
      expect((await cli(['snapshot', '--from-ts', String((first + 6) * B), '--to-ts', String(toTs), '--url', source.api, b])).code).toBe(0);
      expect((await cli(['restore', a, '--url', target.api])).code).toBe(0);
      const second = await cli(['restore', b, '--url', target.api]);
      expect(second.code).toBe(0);
      expect(second.out.tables.svc_spans.duplicates).toBe(6 * 60 * 3);
      for (const t of ['svc_spans', 'svc_logs', 'svc_metrics_gauge', 'svc_profiles']) expect(await tableRows(target, t), t).toEqual(await tableRows(source, t));
    } finally {
      await target.stop();
      target.cleanup();
    }
  });
});

describe('tenants', () => {
  it("a snapshot of one tenant holds only its data, and a restore writes only the caller's store", async () => {
    const hosted = await startHosted(ENV);
    try {
      await createTenant(hosted, 'acme');
      await createTenant(hosted, 'beta');
      const acme = (await issueKey(hosted, 'acme')).key;
      const beta = (await issueKey(hosted, 'beta')).key;
      const at = (first + 2) * B;
      expect((await postOtlp(hosted.otlpHttp, 'traces', tracesJson('acme-svc', [{ name: 'GET /a', startUs: at, durationUs: 10 }]), bearer(acme))).status).toBe(200);
      expect((await postOtlp(hosted.otlpHttp, 'traces', tracesJson('beta-svc', [{ name: 'GET /b', startUs: at, durationUs: 10 }]), bearer(beta))).status).toBe(200);
      const acmeSnap = join(dir, 'acme');
      expect((await cli(['snapshot', '--from-ts', String(fromTs), '--to-ts', String(toTs), '--url', hosted.api, '--api-key', acme, acmeSnap])).code).toBe(0);
      const manifest = JSON.parse(readFileSync(join(acmeSnap, 'manifest.json'), 'utf8'));
      expect(manifest.tables.find((t: { name: string }) => t.name === 'svc_spans').rows).toBe(1);
      expect((await cli(['restore', acmeSnap, '--url', hosted.api, '--api-key', beta])).code).toBe(0);
      const services = async (key: string) => (await fetch(`${hosted.api}/v1/services`, { headers: bearer(key) }).then((r) => r.json())) as { services: { service_name: string }[] };
      expect((await services(acme)).services.map((s) => s.service_name)).toEqual(['acme-svc']);
      expect((await services(beta)).services.map((s) => s.service_name).sort()).toEqual(['acme-svc', 'beta-svc']);
      const noKey = await fetch(`${hosted.api}/v1/snapshot`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ from_ts: fromTs, to_ts: toTs }) });
      expect(noKey.status).toBe(401);
    } finally {
      await hosted.stop();
      hosted.cleanup();
    }
  });
});

describe('bad archives', () => {
  const manifestOf = () => JSON.parse(readFileSync(join(snap, 'manifest.json'), 'utf8'));
  const filesOf = (m: { tables: { file: string }[] }) => m.tables.map((t) => ({ name: t.file, data: readFileSync(join(snap, t.file)) }));
  const archive = (m: unknown, files: { name: string; data: Uint8Array }[]) => writeTar([{ name: 'manifest.json', data: Buffer.from(JSON.stringify(m)) }, ...files]);
  const spans = () => rows(fresh.api, `SELECT count(*) AS n FROM svc_spans WHERE ${ALL_TIME}`);

  const cases: [string, () => Uint8Array][] = [
    ['not a tar at all', () => Buffer.from('hello, this is not an archive')],
    ['a tar cut short', () => archive(manifestOf(), filesOf(manifestOf())).subarray(0, 5000)],
    ['no manifest', () => writeTar(filesOf(manifestOf()))],
    ['a manifest that is not JSON', () => writeTar([{ name: 'manifest.json', data: Buffer.from('{oops') }, ...filesOf(manifestOf())])],
    [
      'a file that does not match its checksum',
      () => {
        const files = filesOf(manifestOf());
        const f = files.find((x) => x.name === 'svc_spans.parquet')!;
        f.data = Buffer.from(f.data);
        f.data[100] ^= 0xff;
        return archive(manifestOf(), files);
      },
    ],
    [
      'a file that is not Parquet, with a checksum that matches',
      () => {
        const m = manifestOf();
        const files = filesOf(m);
        const junk = Buffer.from('PAR1 but not really a parquet file PAR1');
        files.find((x) => x.name === 'svc_spans.parquet')!.data = junk;
        Object.assign(m.tables.find((t: { name: string }) => t.name === 'svc_spans'), { bytes: junk.length, sha256: sha256(junk) });
        return archive(m, files);
      },
    ],
    [
      'a table this server does not have',
      () => {
        const m = manifestOf();
        m.tables[1].name = 'svc_secrets';
        return archive(m, filesOf(m));
      },
    ],
    [
      'a newer snapshot format',
      () => {
        const m = manifestOf();
        m.version = 99;
        return archive(m, filesOf(m));
      },
    ],
    [
      'a member the manifest does not list',
      () => {
        const m = manifestOf();
        return archive(m, [...filesOf(m), { name: 'extra.bin', data: Buffer.from('x') }]);
      },
    ],
  ];
  for (const [what, make] of cases) {
    it(`refuses ${what} (400 MALFORMED or BAD_REQUEST) and stores nothing`, async () => {
      const before = await spans();
      const res = await fetch(`${fresh.api}/v1/restore`, { method: 'POST', headers: { 'content-type': 'application/x-tar' }, body: make() as BodyInit });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(['MALFORMED', 'BAD_REQUEST']).toContain(body.error.code);
      expect(await spans()).toEqual(before);
    });
  }

  it('tds restore checks a directory before sending anything', async () => {
    const tampered = join(dir, 'tampered');
    const m = manifestOf();
    mkdirSync(tampered);
    writeFileSync(join(tampered, 'manifest.json'), JSON.stringify(m));
    for (const f of filesOf(m)) writeFileSync(join(tampered, f.name), f.name === 'svc_logs.parquet' ? f.data.subarray(0, 10) : f.data);
    const r = await cli(['restore', tampered, '--url', 'http://127.0.0.1:9']);
    expect(r.code).toBe(1);
    expect(r.out.error).toMatchObject({ code: 'MALFORMED', message: expect.stringMatching(/svc_logs\.parquet.*truncated or changed/) });
  });
});
