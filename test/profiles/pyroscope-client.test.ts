// A real client: @pyroscope/nodejs pushes to a capture server here; every request it makes goes
// through ingestPyroscopeBody exactly as the /ingest route would pass it (body + query parameters).
// The wall profile must land as wall/nanoseconds rows for the app's service with its tags.
import { createServer, type IncomingMessage } from 'node:http';
import { gunzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import Pyroscope from '@pyroscope/nodejs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ingestPyroscopeBody, DecodeError, type ProfileRow } from '../../src/receivers/profiles/index.js';

interface Captured {
  path: string;
  query: URLSearchParams;
  contentType: string | undefined;
  body: Buffer;
}

const captured: Captured[] = [];
const server = createServer((req: IncomingMessage, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const url = new URL(req.url ?? '/', 'http://x');
    captured.push({ path: url.pathname, query: url.searchParams, contentType: req.headers['content-type'], body: Buffer.concat(chunks) });
    res.writeHead(200).end();
  });
});

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
});

/** Heap uploads carry inuse_space in their string table (the body is gzip). */
function isHeap(c: Captured): boolean {
  return gunzipSync(c.body).includes('inuse_space');
}

function burn(ms: number): number {
  const end = Date.now() + ms;
  let x = 0;
  const keep: number[][] = [];
  while (Date.now() < end) {
    for (let i = 0; i < 1e4; i++) x += Math.sqrt(i) * Math.sin(x);
    keep.push(new Array(1000).fill(x));
    if (keep.length > 200) keep.shift();
  }
  return x + keep.length;
}

test('@pyroscope/nodejs wall and heap pushes decode to rows for the app', async () => {
  const port = (server.address() as AddressInfo).port;
  Pyroscope.init({
    serverAddress: `http://127.0.0.1:${port}`,
    appName: 'client-test',
    tags: { env: 'test' },
    flushIntervalMs: 1000,
    wall: { samplingDurationMs: 1000, samplingIntervalMicros: 1000 },
    heap: { samplingIntervalBytes: 4096 },
  });
  Pyroscope.start();
  // heap profiles are exported on flush rounds only (stop() exports the last wall profile), so
  // run past a round; burn() yields so the round's timer can fire
  for (let i = 0; i < 25; i++) {
    burn(100);
    await new Promise((r) => setImmediate(r));
  }
  await Pyroscope.stop();
  // stop() flushes; the uploads are fire-and-forget fetches, so wait until they arrived
  for (let i = 0; i < 100 && !captured.some((c) => c.body.length > 0 && isHeap(c)); i++) await new Promise((r) => setTimeout(r, 50));

  expect(captured.length).toBeGreaterThanOrEqual(1);
  const rows: ProfileRow[] = [];
  for (const c of captured) {
    expect(c.path).toBe('/ingest');
    expect(c.contentType).toBe('application/octet-stream');
    const q = Object.fromEntries(c.query.entries());
    expect(q['format']).toBe('pprof');
    try {
      rows.push(...ingestPyroscopeBody(c.body, q).rows);
    } catch (e) {
      // a heap profile taken before any sampled allocation is legitimately empty
      expect(e).toBeInstanceOf(DecodeError);
      expect((e as DecodeError).code).toBe('EMPTY');
    }
  }
  const wall = rows.filter((r) => r.profile_type === 'wall' && r.unit === 'nanoseconds');
  expect(wall.length).toBeGreaterThan(0);
  const heap = rows.filter((r) => r.profile_type === 'inuse_space' && r.unit === 'bytes');
  expect(heap.length).toBeGreaterThan(0);
  expect(JSON.parse(heap[0]!.attributes!)).toMatchObject({ env: 'test', 'process.runtime.name': 'nodejs' });
  expect(new Set(rows.map((r) => r.service_name))).toEqual(new Set(['client-test']));
  expect(JSON.parse(wall[0]!.attributes!)).toMatchObject({ spy_name: 'nodespy' });
  expect(wall.some((r) => r.stack.some((f) => f.includes('burn')))).toBe(true);
  expect(wall[0]!.timestamp).toBeGreaterThan(1e15);
});
