// OTLP/HTTP refuses a request at its headers, by the size it declares (api/http.ts), and after a 429
// closes the connection instead of reading a body it would drop (other early answers, such as 413,
// still read the body: test/receivers/profiles.test.ts). Here one upload is admitted and left half
// sent, so it holds the bytes in flight (SVC_MAX_INFLIGHT_BYTES at its 1 KiB minimum); a second
// request declaring 3 MB is refused while its sender has sent only 32 KiB of it: the answer and the
// close come although the rest never does. The held upload then completes and is stored whole.
import { describe, expect, it } from 'vitest';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { useTestServer } from '../helpers/server.js';
import { encodeTraces } from '../helpers/otlp.js';
import { availableParallelism } from 'node:os';
import { refusalBurst, refusalsPerSecond } from '../../src/receivers/refusal-pace.js';

const srv = useTestServer({ SVC_MAX_INFLIGHT_BYTES: '1024', SVC_MAX_ACK_WAIT_MS: '0' });
const NOW_US = Date.now() * 1000 - 60_000_000;

interface Raw {
  socket: net.Socket;
  /** What the server sent once `n` whole answers have arrived (by their Content-Length) or it closed the connection. */
  answers(n: number): Promise<{ text: string; closed: boolean }>;
}

/** Whole answers in `text`: each a head, then its Content-Length of body. */
function complete(text: string): number {
  let n = 0;
  for (let at = 0; ; n++) {
    const end = text.indexOf('\r\n\r\n', at);
    if (end < 0) return n;
    const length = Number(/\r\ncontent-length: (\d+)/i.exec(text.slice(at, end))?.[1] ?? 0);
    if (text.length < end + 4 + length) return n;
    at = end + 4 + length;
  }
}

/** Opens a connection to the OTLP/HTTP port and writes `head` (and `body`, if any) on it. */
async function open(head: string, body?: Uint8Array): Promise<Raw> {
  const port = Number(new URL(srv.otlpHttp).port);
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let text = '';
  let closed = false;
  const waiters = new Set<() => void>();
  const wake = () => waiters.forEach((w) => w());
  socket.on('data', (d: Buffer) => ((text += d.toString('latin1')), wake()));
  socket.on('error', () => {}); // a reset shows as the close
  socket.once('close', () => ((closed = true), wake()));
  socket.write(head);
  if (body) socket.write(body);
  return {
    socket,
    answers: (n) =>
      new Promise((resolve) => {
        const check = () => {
          if (!closed && complete(text) < n) return;
          // The close follows an answer that asks for it; wait for it rather than read it as kept open.
          if (!closed && /\r\nconnection: close\r\n/i.test(text)) return;
          waiters.delete(check);
          resolve({ text, closed });
        };
        waiters.add(check);
        check();
      }),
  };
}

const post = (length: number, contentType: string) => `POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: ${contentType}\r\nContent-Length: ${length}\r\n\r\n`;

/** Waits until the server counts an admitted upload's bytes in flight (admission is decided at the headers). */
async function untilInFlight(): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const st = (await (await fetch(`${srv.api}/admin/status`)).json()) as { status: { ingest: Record<string, number> } };
    if (st.status.ingest['inflight_bytes']! > 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function spanCount(service: string): Promise<number> {
  const res = await fetch(`${srv.api}/v1/query`, { method: 'POST', body: `SELECT count(*) AS n FROM svc_spans WHERE service_name = '${service}'` });
  expect(res.status).toBe(200);
  return Number(((await res.json()) as { n: number }[])[0]!.n);
}

describe('OTLP/HTTP refusal before the body', () => {
  it('answers 429 with a status body and Retry-After, closes the connection without reading the body, and loses nothing admitted', async () => {
    const traceId = randomBytes(16);
    const held = encodeTraces('held', Array.from({ length: 50 }, (_v, i) => ({ traceId, startUs: NOW_US + i, durationUs: 10, attributes: { i } })));
    expect(held.length).toBeGreaterThan(1024);
    const first = await open(post(held.length, 'application/x-protobuf'), held.subarray(0, 100));
    // Admission is decided at the headers: once the server has seen them, the held bytes count in flight.
    await untilInFlight();

    const refused = await open(post(3_000_000, 'application/json'), Buffer.alloc(32 * 1024, 0x20));
    const { text, closed } = await refused.answers(1);
    expect(closed).toBe(true);
    const [head, body] = text.split('\r\n\r\n') as [string, string];
    expect(head).toMatch(/^HTTP\/1\.1 429 /);
    expect(head).toMatch(/\r\ncontent-type: application\/json\r\n/i);
    expect(Number(/\r\nretry-after: (\d+)/i.exec(head)?.[1])).toBeGreaterThanOrEqual(1);
    expect(head).toMatch(/\r\nconnection: close\r\n/i);
    const status = JSON.parse(body) as { code: number; message: string };
    expect(status.code).toBe(14); // UNAVAILABLE: OTLP exporters retry it
    expect(status.message).toMatch(/busy/);

    // The held upload completes and is acknowledged, and what was acknowledged is stored; a body read
    // whole leaves the connection open for the next request.
    first.socket.write(held.subarray(100));
    expect((await first.answers(1)).text).toMatch(/^HTTP\/1\.1 200 /);
    first.socket.write('GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n');
    const next = await first.answers(2);
    expect(next.text).toMatch(/\r\n\r\nHTTP\/1\.1 404 /);
    expect(next.closed).toBe(false);
    first.socket.destroy();
    expect(await spanCount('held')).toBe(50);
  });

  it('paces a flood of refusals: beyond the burst each waits its turn, unread, and still gets its 429', async () => {
    const held = encodeTraces('held-pace', [{ traceId: randomBytes(16), startUs: NOW_US, durationUs: 10, attributes: {} }]);
    const first = await open(post(held.length + 2048, 'application/x-protobuf'), held.subarray(0, 10));
    await untilInFlight();
    const burst = refusalBurst(refusalsPerSecond(availableParallelism()));
    const flood = await Promise.all(Array.from({ length: burst + 60 }, () => open(post(3_000_000, 'application/x-protobuf'), Buffer.alloc(32 * 1024))));
    const answers = await Promise.all(flood.map((c) => c.answers(1)));
    for (const a of answers) {
      expect(a.closed).toBe(true);
      expect(a.text).toMatch(/^HTTP\/1\.1 429 /);
    }
    const st = (await (await fetch(`${srv.api}/admin/status`)).json()) as { status: { ingest: Record<string, number> } };
    expect(st.status.ingest['refusals_paced']).toBeGreaterThan(0);
    expect(st.status.ingest['refusals_waiting']).toBe(0);
    first.socket.destroy();
  });

  it('keeps the connection open after an answer to a request without a body', async () => {
    const c = await open('GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n');
    await c.answers(1);
    c.socket.write('GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n');
    const { text, closed } = await c.answers(2);
    expect(text.match(/HTTP\/1\.1 404 /g)).toHaveLength(2);
    expect(text).not.toMatch(/connection: close/i);
    expect(closed).toBe(false);
    c.socket.destroy();
  });
});
