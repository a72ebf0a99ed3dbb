// The fuzzed bodies of the other fuzz files, POSTed to a real server on real ports: OTLP/HTTP
// (traces, logs, metrics in protobuf and JSON, gzip or not; profiles), the Pyroscope ingest paths
// (raw pprof, push requests, multipart), /v1/query and /v1/diagnose, sometimes with broken headers.
// Property: every answer is below 500; a 4xx carries the error body of its port (the API's JSON
// error with a hint, OTLP's google.rpc.Status in the request's encoding; the API's answers are also
// checked against the served API description by test/setup). Afterwards the server still answers and what it
// acknowledged before the fuzzing is still readable.
import fc from 'fast-check';
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { clientFor, queryRows } from '../helpers/client.js';
import { encodeTraces, messageType, postOtlp } from '../helpers/otlp.js';
import { useTestServer } from '../helpers/server.js';
import { budget, HANG_MS, testTimeout } from './budget.js';
import { diagnoseBody } from './diagnose-gen.js';
import { hostileJson } from './hostile-json.js';
import { DOCS, protobufSeeds, type OtlpSignal } from './otlp-gen.js';
import { ingestQuery, multipart, otlpProfiles, pprofBody, pushJson, pushProto } from './profiles-gen.js';
import { hostileSql } from './sql-gen.js';
import { hostileBytes } from './wire.js';
import type { IngestQuery } from '../../src/pipeline/decode/profiles/index.js';

// Recent timestamps: the server deletes data older than its retention at start.
const NOW_US = Date.now() * 1000 - 60_000_000;
const srv = useTestServer({ SVC_MAX_BODY_BYTES: String(1024 * 1024), SVC_QUERY_TIMEOUT_MS: '1000' });
const keeperTrace = Buffer.from('5bd1f1b5e63a4c2b9a3f0e6d7c8b9a01', 'hex');

interface Req {
  port: 'api' | 'otlp';
  path: string;
  headers: Record<string, string>;
  body: Uint8Array | string;
}

const SIGNALS: OtlpSignal[] = ['traces', 'logs', 'metrics'];

const otlpProto = fc.tuple(fc.constantFrom(...SIGNALS), fc.boolean()).chain(([signal, gz]) =>
  hostileBytes(protobufSeeds(signal)).map(
    (b): Req => ({ port: 'otlp', path: `/v1/${signal}`, headers: { 'content-type': 'application/x-protobuf', ...(gz ? { 'content-encoding': 'gzip' } : {}) }, body: gz ? gzipSync(b) : b }),
  ),
);
const otlpJson = fc.constantFrom(...SIGNALS).chain((signal) =>
  hostileJson(DOCS[signal]).map((text): Req => ({ port: 'otlp', path: `/v1/${signal}`, headers: { 'content-type': 'application/json' }, body: text })),
);
const otlpProfile = hostileBytes(otlpProfiles).map((b): Req => ({ port: 'otlp', path: '/v1development/profiles', headers: { 'content-type': 'application/x-protobuf' }, body: b }));

const PYROSCOPE_PATHS = ['/ingest', '/', '/ingest/pyroscope', '/push.v1.PusherService/Push'];
const queryString = (q: IngestQuery) => new URLSearchParams(Object.entries(q).filter((e): e is [string, string | number] => e[1] !== null && e[1] !== undefined).map(([k, v]) => [k, String(v)])).toString();

const pyroscope = fc.oneof(
  fc.tuple(hostileBytes(pprofBody), ingestQuery, fc.constantFrom(...PYROSCOPE_PATHS)).map(([b, q, path]): Req => ({ port: 'api', path: `${path}?${queryString(q)}`, headers: { 'content-type': 'application/octet-stream' }, body: b })),
  hostileBytes(pushProto).map((b): Req => ({ port: 'api', path: '/push.v1.PusherService/Push', headers: { 'content-type': 'application/proto' }, body: b })),
  hostileJson(pushJson).map((t): Req => ({ port: 'api', path: '/push.v1.PusherService/Push', headers: { 'content-type': 'application/json' }, body: t })),
  multipart.map((m): Req => ({ port: 'api', path: '/ingest?name=fuzz', headers: { 'content-type': m.contentType }, body: m.body })),
);
const query = hostileSql.map((sql): Req => ({ port: 'api', path: '/v1/query', headers: { 'content-type': 'text/plain' }, body: sql }));
const diagnose = fc.tuple(hostileJson(diagnoseBody(NOW_US)), fc.constantFrom('/v1/diagnose', '/v1/investigate')).map(([t, path]): Req => ({ port: 'api', path, headers: { 'content-type': 'application/json' }, body: t }));

/** Headers a broken client sends: a compression it did not apply or that is not supported, wrong or empty media types. */
const badHeaders = fc.constantFrom<Record<string, string>>(
  { 'content-encoding': 'gzip' },
  { 'content-encoding': 'br' },
  { 'content-encoding': 'gzip, gzip' },
  { 'content-type': 'text/plain' },
  { 'content-type': '' },
  { 'content-type': 'application/x-protobuf; charset=utf-8' },
  { 'content-type': 'application/json; charset=utf-16' },
  { 'content-type': 'multipart/form-data' },
  { 'content-type': 'APPLICATION/JSON' },
);

const request = fc
  .tuple(fc.oneof(otlpProto, otlpJson, otlpProfile, pyroscope, query, diagnose), fc.option(badHeaders, { freq: 5 }))
  .map(([r, h]): Req => (h ? { ...r, headers: { ...r.headers, ...h } } : r));

async function send(r: Req): Promise<Response> {
  const base = r.port === 'api' ? srv.api : srv.otlpHttp;
  return fetch(base + r.path, { method: 'POST', headers: r.headers, body: r.body as BodyInit, signal: AbortSignal.timeout(HANG_MS) });
}

async function expectClientAnswer(r: Req, res: Response): Promise<void> {
  const what = `${r.path} → ${res.status}`;
  const bytes = new Uint8Array(await res.arrayBuffer());
  expect(res.status, `${what}: ${Buffer.from(bytes).toString('utf8').slice(0, 300)}`).toBeLessThan(500);
  if (res.status < 400) return;
  const type = res.headers.get('content-type') ?? '';
  if (r.port === 'otlp') {
    // OTLP answers a google.rpc.Status in the request's encoding; JSON for a media type it does not take.
    const base = (r.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const proto = base === 'application/x-protobuf' || base === 'application/protobuf';
    expect(type, what).toBe(proto ? 'application/x-protobuf' : 'application/json');
    const S = messageType('google.rpc.Status');
    const st = (proto ? S.toObject(S.decode(bytes)) : JSON.parse(Buffer.from(bytes).toString('utf8'))) as { code?: number; message?: string };
    expect(st.code, what).toBeGreaterThan(0);
    expect(st.message?.length, what).toBeGreaterThan(0);
    return;
  }
  expect(type, what).toMatch(/^application\/json/);
  const err = (JSON.parse(Buffer.from(bytes).toString('utf8')) as { error: { code: string; message: string; hint: string } }).error;
  expect(err.code.length, what).toBeGreaterThan(0);
  expect(err.message.length, what).toBeGreaterThan(0);
  expect(typeof err.hint, what).toBe('string');
}

async function keeperSpans(): Promise<number> {
  const res = await fetch(`${srv.api}/v1/traces/${keeperTrace.toString('hex')}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { span_count: number }).span_count;
}

beforeAll(async () => {
  const good = encodeTraces('keeper', [
    { traceId: keeperTrace, startUs: NOW_US, durationUs: 5 },
    { traceId: keeperTrace, startUs: NOW_US + 10, durationUs: 3 },
  ]);
  expect((await postOtlp(srv.otlpHttp, 'traces', good)).status).toBe(200);
  expect(await keeperSpans()).toBe(2);
});

describe('fuzzed requests to a real server', () => {
  it('every answer is < 500 with its port\'s error body; afterwards the server answers and earlier data is intact', async () => {
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const res = await send(r);
        statuses.add(res.status);
        await expectClientAnswer(r, res);
      }),
      { ...budget(100, 0.2), timeout: HANG_MS },
    );
    // The generators reach the decoders: some bodies are accepted, some refused, none misrouted.
    expect(statuses.has(200) && statuses.has(400)).toBe(true);
    expect(statuses.has(404) || statuses.has(405)).toBe(false);
    expect((await fetch(`${srv.api}/healthz`)).status).toBe(200);
    expect(await keeperSpans()).toBe(2);
    expect(await queryRows(clientFor(srv.api), "SELECT count(*) AS n FROM svc_spans WHERE service_name = 'keeper'")).toEqual([{ n: 2 }]);
    expect(srv.child.exitCode).toBeNull();
  }, testTimeout(120_000));
});
