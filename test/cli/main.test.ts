import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { run, type CliIo } from '../../src/cli/main.js';

interface Seen { method: string; path: string; query: URLSearchParams; headers: IncomingMessage['headers']; body: string }
type Handler = (req: Seen, res: ServerResponse) => void;

let server: Server;
let url: string;
let seen: Seen[] = [];
let routes: Record<string, Handler> = {};

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const u = new URL(req.url!, 'http://x');
      const s: Seen = { method: req.method!, path: u.pathname, query: u.searchParams, headers: req.headers, body: Buffer.concat(chunks).toString() };
      seen.push(s);
      const h = routes[`${req.method} ${u.pathname}`];
      if (h) h(s, res);
      else json(res, 404, { error: { code: 'NOT_FOUND', message: 'no such route', hint: '' } });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  seen = [];
  routes = {};
});

interface Result { code: number; out: any; stdout: string; stderr: string }

async function tds(argv: string[], opts: { env?: Record<string, string>; stdin?: CliIo['stdin']; now?: number } = {}): Promise<Result> {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    env: { SVC_URL: url, ...opts.env },
    stdin: opts.stdin,
    now: opts.now === undefined ? undefined : () => opts.now!,
  });
  // Output is always indented JSON on stdout.
  expect(stdout.endsWith('\n')).toBe(true);
  const out = JSON.parse(stdout);
  expect(stdout).toBe(JSON.stringify(out, null, 2) + '\n');
  return { code, out, stdout, stderr };
}

function expectError(r: Result, code: string, exit: number): void {
  expect(r.code).toBe(exit);
  expect(Object.keys(r.out)).toEqual(['error']);
  expect(r.out.error.code).toBe(code);
  expect(typeof r.out.error.message).toBe('string');
  expect(typeof r.out.error.hint).toBe('string');
}

const LO = "TIMESTAMP '2025-01-01 00:00:00'";

describe('help and usage', () => {
  it('--help lists the commands as JSON, exit 0', async () => {
    const r = await tds(['--help']);
    expect(r.code).toBe(0);
    expect(r.out.commands.map((c: { command: string }) => c.command).sort()).toEqual(
      ['admin', 'anomalies', 'detect', 'diagnose', 'fetch-extensions', 'healthcheck', 'investigate', 'mcp', 'query', 'replay', 'restore', 'snapshot', 'status'].sort(),
    );
  });

  it.each(['anomalies', 'diagnose', 'investigate', 'query', 'status', 'fetch-extensions', 'healthcheck', 'mcp', 'admin', 'replay', 'detect', 'snapshot', 'restore'])('tds %s --help', async (cmd) => {
    const r = await tds([cmd, '--help']);
    expect(r.code).toBe(0);
    expect(r.out.command).toBe(cmd);
    expect(r.out.usage).toMatch(new RegExp(`^tds ${cmd}`));
    expect(r.out.global_options.map((o: { option: string }) => o.option)).toContain('--url URL');
    expect(seen).toHaveLength(0);
  });

  it.each([
    [[] as string[]],
    [['bogus']],
    [['anomalies', '--bogus']],
    [['anomalies', '--from-ts']],
    [['anomalies', '--from-ts', '1700000000']], // seconds
    [['anomalies', '--from-ts', 'yesterday-ish']],
    [['diagnose']],
    [['diagnose', '--service', 'a', '--to-ts', '1735689600000000']],
    [['diagnose', ...Array.from({ length: 11 }, (_, i) => `s${i}`)]],
    [['query']],
    [['query', 'SELECT 1', '--file', '/nonexistent']],
    [['status', 'extra']],
    [['status', '--url', 'not a url']],
    [['status', '--timeout-ms', '0']],
    [['query', '--full-scan=yes', 'SELECT 1']],
  ])('usage error %j → exit 2, USAGE, nothing sent', async (argv) => {
    const r = await tds(argv);
    expectError(r, 'USAGE', 2);
    expect(seen).toHaveLength(0);
  });
});

describe('anomalies', () => {
  it('defaults to the last hour in microseconds and passes the service', async () => {
    routes['GET /v1/anomalies'] = (_req, res) => json(res, 200, { anomalies: [], truncated: false });
    const now = 1_735_689_600_000; // ms
    const r = await tds(['anomalies', '--service', 'checkout'], { now });
    expect(r.code).toBe(0);
    expect(r.out).toEqual({ anomalies: [], truncated: false });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.query.get('service')).toBe('checkout');
    expect(seen[0]!.query.get('to_ts')).toBe(String(now * 1000));
    expect(seen[0]!.query.get('from_ts')).toBe(String(now * 1000 - 3_600_000_000));
    expect(seen[0]!.headers.authorization).toBeUndefined();
  });

  it('accepts explicit microseconds and ISO timestamps; global options after the command', async () => {
    routes['GET /v1/anomalies'] = (_req, res) => json(res, 200, { anomalies: [], truncated: false });
    const r = await tds(['anomalies', '--from-ts', '1735689600000000', '--to-ts=2025-01-01T02:00:00Z', '--api-key', 'k1']);
    expect(r.code).toBe(0);
    expect(seen[0]!.query.get('from_ts')).toBe('1735689600000000');
    expect(seen[0]!.query.get('to_ts')).toBe('1735696800000000');
    expect(seen[0]!.query.has('service')).toBe(false);
    expect(seen[0]!.headers.authorization).toBe('Bearer k1');
  });

  it('SVC_API_KEY is sent as a bearer token; a 401 body is passed through with exit 1', async () => {
    routes['GET /v1/anomalies'] = (_req, res) => json(res, 401, { error: { code: 'UNAUTHORIZED', message: 'missing or invalid bearer token', hint: 'send a key' } });
    const r = await tds(['anomalies'], { env: { SVC_API_KEY: 'secret' } });
    expect(seen[0]!.headers.authorization).toBe('Bearer secret');
    expectError(r, 'UNAUTHORIZED', 1);
    expect(r.out.error.hint).toBe('send a key');
  });
});

describe('diagnose and investigate', () => {
  it.each(['diagnose', 'investigate'])('%s posts JSON to /v1/diagnose', async (cmd) => {
    routes['POST /v1/diagnose'] = (_req, res) => json(res, 200, { results: { a: { service: 'a' } }, errors: {} });
    const r = await tds([cmd, '--service', 'a', '--service', 'b', 'c', '--from-ts', '1735689600000000', '--to-ts', '1735690500000000']);
    expect(r.code).toBe(0);
    expect(r.out.results.a.service).toBe('a');
    expect(seen).toHaveLength(1);
    expect(seen[0]!.path).toBe('/v1/diagnose');
    expect(seen[0]!.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(seen[0]!.body)).toEqual({ services: ['a', 'b', 'c'], from_ts: 1735689600000000, to_ts: 1735690500000000 });
  });

  it('omits timestamps when none are given (the server default window applies)', async () => {
    routes['POST /v1/diagnose'] = (_req, res) => json(res, 200, { results: {}, errors: { x: 'failed' } });
    const r = await tds(['diagnose', 'x']);
    expect(r.code).toBe(0);
    expect(JSON.parse(seen[0]!.body)).toEqual({ services: ['x'] });
  });

  it('a server 400 is printed with its code and exit 1', async () => {
    routes['POST /v1/diagnose'] = (_req, res) => json(res, 400, { error: { code: 'INVALID_TIMESTAMP', message: 'not microseconds', hint: 'use 16 digits' } });
    expectError(await tds(['diagnose', 'x']), 'INVALID_TIMESTAMP', 1);
  });

  it('--detail and --max-bytes go in the body as given; a budget that is not a number is a usage error', async () => {
    routes['POST /v1/diagnose'] = (_req, res) => json(res, 200, { results: {}, errors: {} });
    expect((await tds(['diagnose', 'x', '--detail', 'findings', '--max-bytes', '4096'])).code).toBe(0);
    expect(JSON.parse(seen[0]!.body)).toEqual({ services: ['x'], detail: 'findings', max_bytes: 4096 });
    // The server checks the values: an unknown view goes as given.
    expect((await tds(['diagnose', 'x', '--detail', 'compact'])).code).toBe(0);
    expect(JSON.parse(seen[1]!.body)).toEqual({ services: ['x'], detail: 'compact' });
    for (const bad of ['4k', '-1', '1.5', '']) expectError(await tds(['diagnose', 'x', '--max-bytes', bad]), 'USAGE', 2);
    expect(seen).toHaveLength(2);
  });
});

describe('query', () => {
  const rows = [{ n: 1 }];

  it('sends a bounded statement as text/plain and prints the rows', async () => {
    routes['POST /v1/query'] = (_req, res) => json(res, 200, rows);
    const sql = `SELECT count(*) AS n FROM svc_spans WHERE timestamp >= ${LO}`;
    const r = await tds(['query', sql]);
    expect(r.code).toBe(0);
    expect(r.out).toEqual(rows);
    expect(seen[0]!.headers['content-type']).toMatch(/^text\/plain/);
    expect(seen[0]!.body).toBe(sql);
  });

  it('refuses an unbounded scan before sending, with a hint about now(); --full-scan overrides', async () => {
    routes['POST /v1/query'] = (_req, res) => json(res, 200, rows);
    const sql = "SELECT count(*) FROM svc_spans WHERE timestamp > now() - INTERVAL '1 hour'";
    const r = await tds(['query', sql]);
    expectError(r, 'FULL_SCAN_REFUSED', 1);
    expect(r.out.error.message).toContain('svc_spans');
    expect(r.out.error.hint).toMatch(/now\(\)/);
    expect(r.out.error.hint).toMatch(/every file/);
    expect(r.out.error.hint).toContain('--full-scan');
    expect(seen).toHaveLength(0);

    const forced = await tds(['query', '--full-scan', sql]);
    expect(forced.code).toBe(0);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.body).toBe(sql);
  });

  it('refuses an unparseable statement as UNCHECKABLE with a stderr note; --full-scan lets it through', async () => {
    routes['POST /v1/query'] = (_req, res) => json(res, 200, rows);
    const sql = "SELECT {'a': 1} AS s FROM svc_spans WHERE timestamp > TIMESTAMP '2025-01-01'";
    const r = await tds(['query', sql]);
    expectError(r, 'UNCHECKABLE', 1);
    expect(r.out.error.hint).toContain('--full-scan');
    expect(r.stderr).toMatch(/could not run/);
    expect(seen).toHaveLength(0);
    expect((await tds(['query', sql, '--full-scan'])).code).toBe(0);
    expect(seen[0]!.body).toBe(sql);
  });

  it('reads the statement from --file and from stdin', async () => {
    routes['POST /v1/query'] = (_req, res) => json(res, 200, rows);
    const dir = mkdtempSync(join(tmpdir(), 'tds-test-'));
    try {
      const f = join(dir, 'q.sql');
      const sql = `SELECT 1 AS n FROM svc_logs WHERE timestamp > ${LO}\n`;
      writeFileSync(f, sql);
      expect((await tds(['query', '--file', f])).code).toBe(0);
      expect(seen[0]!.body).toBe(sql);
      expect((await tds(['query'], { stdin: Readable.from([Buffer.from(sql)]) })).code).toBe(0);
      expect(seen[1]!.body).toBe(sql);
      expect((await tds(['query', '--file', '-'], { stdin: sql })).code).toBe(0);
      expect(seen[2]!.body).toBe(sql);
      seen.pop();
      const refused = await tds(['query'], { stdin: 'SELECT * FROM svc_logs' });
      expectError(refused, 'FULL_SCAN_REFUSED', 1);
      expect(seen).toHaveLength(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a server error (INTERRUPT) keeps its shape, exit 1; a non-JSON error body is wrapped', async () => {
    routes['POST /v1/query'] = (_req, res) => json(res, 400, { error: { code: 'INTERRUPT', message: 'query interrupted after 10000 ms', hint: 'bound timestamp' } });
    const r = await tds(['query', `SELECT 1 FROM svc_spans WHERE timestamp > ${LO}`]);
    expectError(r, 'INTERRUPT', 1);
    expect(r.out.error.message).toContain('interrupted');
    routes['POST /v1/query'] = (_req, res) => {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end('bad gateway');
    };
    const r2 = await tds(['query', `SELECT 1 FROM svc_spans WHERE timestamp > ${LO}`]);
    expectError(r2, 'HTTP_502', 1);
    expect(r2.out.error.message).toContain('bad gateway');
  });
});

describe('status, healthcheck, endpoint availability, connection errors', () => {
  it('status prints /admin/status', async () => {
    routes['GET /admin/status'] = (_req, res) => json(res, 200, { status: { store: 'open' } });
    const r = await tds(['status', '--url', url]);
    expect(r.code).toBe(0);
    expect(r.out).toEqual({ status: { store: 'open' } });
  });

  it('an endpoint the server does not serve yet gives NOT_AVAILABLE, exit 1', async () => {
    const r = await tds(['status']);
    expectError(r, 'NOT_AVAILABLE', 1);
    expect(r.out.error.message).toContain('/admin/status');
  });

  it('healthcheck: 0 only on 200', async () => {
    routes['GET /healthz'] = (_req, res) => json(res, 200, { status: 'ok' });
    const ok = await tds(['healthcheck']);
    expect(ok.code).toBe(0);
    expect(ok.out.ready).toBe(true);
    routes['GET /healthz'] = (_req, res) => json(res, 503, { error: { code: 'STARTING', message: 'store not open', hint: '' } });
    expectError(await tds(['healthcheck']), 'NOT_READY', 1);
    routes['GET /healthz'] = (_req, res) => {
      res.writeHead(204);
      res.end();
    };
    expectError(await tds(['healthcheck']), 'NOT_READY', 1);
  });

  it('nothing listening → CONNECTION_REFUSED, exit 1 (healthcheck and others)', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    for (const cmd of ['healthcheck', 'status', 'anomalies']) {
      const r = await tds([cmd, '--url', `http://127.0.0.1:${port}`]);
      expectError(r, 'CONNECTION_REFUSED', 1);
      expect(r.out.error.hint).toMatch(/--url|SVC_URL/);
    }
  });

  it('a port fetch refuses to use → CONNECTION_FAILED naming the reason', async () => {
    const r = await tds(['status', '--url', 'http://127.0.0.1:1']);
    expectError(r, 'CONNECTION_FAILED', 1);
    expect(r.out.error.message).toMatch(/bad port/);
  });

  it('a slow server → TIMEOUT within --timeout-ms', async () => {
    routes['GET /admin/status'] = (_req, res) => setTimeout(() => json(res, 200, {}), 2_000);
    const t0 = Date.now();
    const r = await tds(['status', '--timeout-ms', '200']);
    expectError(r, 'TIMEOUT', 1);
    expect(Date.now() - t0).toBeLessThan(1_500);
  });

  it('--url beats SVC_URL; a trailing slash or base path is handled', async () => {
    routes['GET /admin/status'] = (_req, res) => json(res, 200, { status: {} });
    const r = await tds(['--url', url + '/', 'status'], { env: { SVC_URL: 'http://127.0.0.1:1' } });
    expect(r.code).toBe(0);
    expect(seen[0]!.path).toBe('/admin/status');
  });
});
