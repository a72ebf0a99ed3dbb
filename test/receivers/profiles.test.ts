// Profile ingest against the real server: the four Pyroscope paths, raw pprof and push requests
// from the corpora, OTLP profiles over HTTP and gRPC, a real @pyroscope/nodejs client, and every
// status of the spec's response list that a self-hosted (open mode) server can give.
import { describe, expect, it } from 'vitest';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import Pyroscope from '@pyroscope/nodejs';
import { CORPORA_DIR } from '../../src/core/paths.js';
import { corpusPresent } from '../helpers/corpora.js';
import { startTestServer, useTestServer } from '../helpers/server.js';
import { clientFor, queryRows } from '../helpers/client.js';

const PPROF = join(CORPORA_DIR, 'pprof');
const corpus = (p: string) => readFileSync(join(CORPORA_DIR, p));
const haveCorpora = corpusPresent(PPROF);
const CPU = 'pprof/grafana-pyroscope/pkg/og/convert/pprof/testdata/cpu.pb.gz';
const nowS = Math.floor(Date.now() / 1000);

const srv = useTestServer({ SVC_MAX_BODY_BYTES: String(4 * 1024 * 1024) });

const query = (sql: string) => queryRows<Record<string, any>>(clientFor(srv.api), sql);

function post(path: string, body: Uint8Array | string, headers: Record<string, string> = { 'content-type': 'application/octet-stream' }) {
  return fetch(`${srv.api}${path}`, { method: 'POST', headers, body: body as never });
}

describe.skipIf(!haveCorpora)('profile ingest (corpora in ../shared/corpora)', () => {
  for (const [i, path] of ['/', '/ingest', '/ingest/pyroscope', '/push.v1.PusherService/Push'].entries()) {
    it(`POST ${path}?name=… takes a raw pprof; the service is the name before the first {`, async () => {
      const svc = `raw-${i}`;
      const res = await post(`${path}?name=${encodeURIComponent(`${svc}{env=prod,region=eu}`)}&from=${nowS - 10}&until=${nowS}`, corpus(CPU));
      expect(res.status, await res.clone().text()).toBe(200);
      const rows = await query(`SELECT profile_type, unit, sum(value) AS total, any_value(attributes) AS attrs FROM svc_profiles WHERE service_name = '${svc}' GROUP BY ALL`);
      expect(rows.length).toBeGreaterThan(0);
      expect(JSON.parse(rows[0]!['attrs'])).toMatchObject({ env: 'prod', region: 'eu' });
    });
  }

  it('the same profile through every path gives the same totals', async () => {
    const rows = await query(`SELECT service_name, sum(value) AS total, sum(sample_count) AS n FROM svc_profiles WHERE service_name LIKE 'raw-%' GROUP BY ALL ORDER BY 1`);
    expect(rows).toHaveLength(4);
    expect(new Set(rows.map((r) => `${r['total']}/${r['n']}`)).size).toBe(1);
  });

  it('a push request without name lands under each series service_name (protobuf and Connect JSON)', async () => {
    const pb = await post('/push.v1.PusherService/Push', corpus('pprof/pyroscope-push-constructed/push_request_process_cpu.pb'), { 'content-type': 'application/proto' });
    expect(pb.status, await pb.clone().text()).toBe(200);
    const js = await post('/ingest', corpus('pprof/pyroscope-push-constructed/push_request_process_cpu.json'), { 'content-type': 'application/json' });
    expect(js.status, await js.clone().text()).toBe(200);
    const rows = await query(`SELECT count(*) AS n, sum(value) AS total FROM svc_profiles WHERE service_name = 'pprof-sample'`);
    expect(rows[0]!['n']).toBeGreaterThan(0);
  });

  it('multipart/form-data carries the profile in the field `profile`; plain (not gzip) bodies and a missing Content-Type work', async () => {
    const boundary = 'XyZ123';
    const pprof = corpus(CPU);
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="sample_type_config"\r\n\r\n{}\r\n`),
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="profile"; filename="profile.pprof"\r\nContent-Type: application/octet-stream\r\n\r\n`),
      pprof,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    expect((await post('/ingest?name=multi', body, { 'content-type': `multipart/form-data; boundary=${boundary}` })).status).toBe(200);
    // The corpus file is gzip; its plain protobuf, sent with no Content-Type, is a binary body too.
    expect((await post('/ingest?name=nocontenttype', gunzipSync(pprof), {})).status).toBe(200);
    const rows = await query(`SELECT service_name, sum(value) AS total FROM svc_profiles WHERE service_name IN ('multi', 'nocontenttype', 'raw-0') GROUP BY ALL ORDER BY 1`);
    expect(rows.map((r) => r['service_name'])).toEqual(['multi', 'nocontenttype', 'raw-0']);
    expect(new Set(rows.map((r) => r['total'])).size).toBe(1);
  });

  it('OTLP profiles over HTTP and gRPC land with the same totals', async () => {
    const bytes = corpus('otlp/grafana-pyroscope/otel-ebpf-profile.pb.bin');
    const res = await fetch(`${srv.otlpHttp}/v1development/profiles`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body: bytes });
    expect(res.status).toBe(200);
    const httpRows = await query(`SELECT profile_type, sum(value) AS total FROM svc_profiles WHERE source = 'otlp' GROUP BY ALL ORDER BY 1`);
    expect(httpRows.length).toBeGreaterThan(0);
    const client = new grpc.Client(srv.otlpGrpc, grpc.credentials.createInsecure());
    const err = await new Promise<grpc.ServiceError | null>((resolve) =>
      client.makeUnaryRequest('/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export', (b: Buffer) => b, (b: Buffer) => b, bytes, (e) => resolve(e)),
    );
    client.close();
    expect(err).toBeNull();
    const both = await query(`SELECT profile_type, sum(value) AS total FROM svc_profiles WHERE source = 'otlp' GROUP BY ALL ORDER BY 1`);
    expect(both.map((r) => [r['profile_type'], Number(r['total'])])).toEqual(httpRows.map((r) => [r['profile_type'], 2 * Number(r['total'])]));
  });

  it('400: unsupported media type, malformed payload, missing service name, empty profile, legacy format', async () => {
    const cases: [Promise<Response>, string][] = [
      [post('/ingest?name=x', corpus(CPU), { 'content-type': 'text/plain' }), 'BAD_REQUEST'],
      [post('/ingest?name=x', Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2])), 'MALFORMED'],
      [post('/ingest', Buffer.from('{"series":[{"labels":[{"name":"env","value":"x"}],"samples":[]}]}'), { 'content-type': 'application/json' }), ''],
      [post('/ingest?name=x', new Uint8Array(0)), 'EMPTY'],
      [post('/ingest?name=x', corpus('pprof/google-pprof/profile/testdata/cppbench.cpu')), 'LEGACY_FORMAT'],
      [post('/ingest', Buffer.from('{"series":[{"labels":[{"name":"env","value":"x"}],"samples":[{"rawProfile":"' + corpus(CPU).toString('base64') + '"}]}]}'), { 'content-type': 'application/json' }), 'MISSING_SERVICE_NAME'],
    ];
    for (const [p, code] of cases) {
      const res = await p;
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { code: string; hint: string } };
      if (code) expect(body.error.code).toBe(code);
      expect(body.error.hint.length).toBeGreaterThan(0);
    }
  });

  it('413 above the body limit, also for a gzip bomb', async () => {
    expect((await post('/ingest?name=big', new Uint8Array(5 * 1024 * 1024))).status).toBe(413);
    expect((await post('/ingest?name=bomb', gzipSync(Buffer.alloc(64 * 1024 * 1024)))).status).toBe(413);
    expect((await fetch(`${srv.api}/healthz`)).status).toBe(200);
  });
});

describe('profile ingest under pressure', () => {
  it('429 with Retry-After when the bytes in flight exceed the limit', async () => {
    const tight = await startTestServer({ SVC_MAX_INFLIGHT_BYTES: '1024' });
    try {
      const body = new Uint8Array(64 * 1024).fill(7);
      const answers = await Promise.all(Array.from({ length: 24 }, () => fetch(`${tight.api}/ingest?name=x`, { method: 'POST', body })));
      const limited = answers.filter((r) => r.status === 429);
      expect(limited.length).toBeGreaterThan(0);
      expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await tight.stop();
      tight.cleanup();
    }
  });

  it('507 when the disk has less free space than the configured minimum', async () => {
    const full = await startTestServer({ SVC_MIN_FREE_DISK_BYTES: String(Number.MAX_SAFE_INTEGER) });
    try {
      await new Promise((r) => setTimeout(r, 300)); // the first disk check runs at start
      const res = await fetch(`${full.api}/ingest?name=x`, { method: 'POST', body: new Uint8Array(10) });
      expect(res.status).toBe(507);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('STORAGE_FULL');
    } finally {
      await full.stop();
      full.cleanup();
    }
  });

  it.skipIf(!haveCorpora)('500 when the store cannot take the rows, and nothing stored is lost', async () => {
    const broken = await startTestServer();
    try {
      expect((await fetch(`${broken.api}/ingest?name=before`, { method: 'POST', body: corpus(CPU) })).status).toBe(200);
      // Make the spool unusable: a file where the directory was.
      rmSync(join(broken.dataDir, 'spool'), { recursive: true, force: true });
      writeFileSync(join(broken.dataDir, 'spool'), 'not a directory');
      const res = await fetch(`${broken.api}/ingest?name=after`, { method: 'POST', body: corpus(CPU) });
      expect(res.status).toBe(500);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('INGEST_FAILED');
      expect(await queryRows(clientFor(broken.api), `SELECT DISTINCT service_name FROM svc_profiles`)).toEqual([{ service_name: 'before' }]);
    } finally {
      await broken.stop();
      broken.cleanup();
    }
  });
});

/** Busy work the wall profile must show (kept out of line so it is its own frame). */
function burn(ms: number, keep: number[][]): void {
  const end = Date.now() + ms;
  while (Date.now() < end) keep.push(new Array(500).fill(ms));
  if (keep.length > 500) keep.splice(0, 250);
}

describe('a real @pyroscope/nodejs client', () => {
  it('pushes wall and heap profiles that land with the app, its tags and its stacks', async () => {
    Pyroscope.init({
      serverAddress: srv.api,
      appName: 'node-client',
      tags: { env: 'itest' },
      flushIntervalMs: 1000,
      wall: { samplingDurationMs: 1000, samplingIntervalMicros: 1000 },
      heap: { samplingIntervalBytes: 4096 },
    });
    Pyroscope.start();
    const keep: number[][] = [];
    for (let i = 0; i < 25; i++) {
      burn(100, keep);
      await new Promise((r) => setImmediate(r)); // lets the client's flush timer fire
    }
    await Pyroscope.stop();
    let rows: Record<string, any>[] = [];
    for (let i = 0; i < 100; i++) {
      rows = await query(`SELECT profile_type, unit, count(*) AS n FROM svc_profiles WHERE service_name = 'node-client' GROUP BY ALL`);
      if (rows.some((r) => r['profile_type'] === 'wall') && rows.some((r) => r['unit'] === 'bytes')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(rows.some((r) => r['profile_type'] === 'wall' && r['unit'] === 'nanoseconds')).toBe(true);
    expect(rows.some((r) => r['profile_type'] === 'inuse_space' && r['unit'] === 'bytes')).toBe(true);
    const wall = await query(`SELECT any_value(attributes) AS attrs, count_if(list_contains(list_transform(stack, f -> f LIKE '%burn%'), true)) AS burning FROM svc_profiles WHERE service_name = 'node-client' AND profile_type = 'wall'`);
    expect(JSON.parse(wall[0]!['attrs'])).toMatchObject({ env: 'itest', spy_name: 'nodespy' });
    expect(wall[0]!['burning']).toBeGreaterThan(0);
    const heap = await query(`SELECT any_value(attributes) AS attrs FROM svc_profiles WHERE service_name = 'node-client' AND profile_type = 'inuse_space'`);
    expect(JSON.parse(heap[0]!['attrs'])).toMatchObject({ env: 'itest', 'process.runtime.name': 'nodejs' });
  });
});
