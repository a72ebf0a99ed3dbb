// Sending a recording's requests through the normal ingest path, OTLP/HTTP: a few in flight at once
// (log requests one at a time, in the recording's order: the server's template miner numbers templates
// and keeps samples in the order lines arrive, so the replay gets the ids the recording would), paced as asked (as fast as acknowledged, at most N records a second, or N× real time by the
// recording's own timestamps), a refused request (429, 502-504, a dropped connection) sent again
// after the delay the server asks for, and every answer counted: a record is acknowledged only when
// its request was answered 200 and it is not among the partial success's rejected ones.
import http from 'node:http';
import https from 'node:https';
import { REQUESTS, type Signal } from './shape.js';

export interface Prepared {
  signal: Signal;
  body: string | Uint8Array;
  contentType: 'application/json' | 'application/x-protobuf';
  records: number;
  /** The request's earliest and latest timestamps (ns, after any shift); 0n when it has none. */
  minNs: bigint;
  maxNs: bigint;
  file: string;
  at: number;
}

export interface Counts {
  sent: number;
  acknowledged: number;
  rejected: number;
}

export interface Rejection {
  reason: string;
  records: number;
  requests: number;
  /** Where the first request rejected for this reason came from (file:line). */
  first: string;
}

export interface SendOptions {
  /** The OTLP/HTTP receiver's base URL. */
  otlpUrl: string;
  apiKey?: string | undefined;
  concurrency: number;
  /** Records a second at most; null: as fast as acknowledged. */
  rate: number | null;
  /** N× real time by the recording's timestamps; null: not paced by them. */
  speed: number | null;
  /** The recording's earliest timestamp (ns) that --speed paces from. */
  startNs: bigint;
  timeoutMs: number;
  /** How long one request keeps being sent again while refused, ms. */
  retryForMs?: number;
}

/** Consecutive requests that found no server before the replay stops (a wrong URL, a stopped server). */
const UNREACHABLE_LIMIT = 3;
/** Sends of one request that fail without an answer before it counts as rejected. */
const MAX_NETWORK_TRIES = 4;
const MAX_RETRY_AFTER_S = 30;

export class Unreachable extends Error {}

/** The reason of an error answer: its status, and the code and message of its body (the API's error body or a google.rpc.Status). */
function reasonOf(status: number, contentType: string | null, body: Uint8Array): string {
  let code: string | number | undefined;
  let message: string | undefined;
  if (contentType?.startsWith('application/json')) {
    try {
      const j = JSON.parse(Buffer.from(body).toString('utf8')) as Record<string, unknown>;
      const e = (typeof j['error'] === 'object' && j['error'] ? j['error'] : j) as Record<string, unknown>;
      code = e['code'] as string | number | undefined;
      message = e['message'] as string | undefined;
    } catch {
      // not JSON after all
    }
  } else if (contentType?.startsWith('application/x-protobuf')) {
    const s = decodeStatus(body);
    code = s.code;
    message = s.message;
  }
  return `HTTP ${status}${code !== undefined ? ` ${code}` : ''}${message ? `: ${message}` : ''}`;
}

/** The varint and length-delimited fields of a small protobuf message, read leniently (an answer, not a recording). */
function fieldsOf(b: Uint8Array): { no: number; value: number; bytes: Uint8Array | null }[] {
  const out: { no: number; value: number; bytes: Uint8Array | null }[] = [];
  let i = 0;
  const varint = () => {
    let v = 0;
    let mul = 1;
    while (i < b.length) {
      const x = b[i++]!;
      v += (x & 0x7f) * mul;
      if (x < 0x80) break;
      mul *= 128;
    }
    return v;
  };
  while (i < b.length) {
    const tag = varint();
    const no = Math.floor(tag / 8);
    if ((tag & 7) === 0) out.push({ no, value: varint(), bytes: null });
    else if ((tag & 7) === 2) {
      const len = varint();
      out.push({ no, value: 0, bytes: b.subarray(i, i + len) });
      i += len;
    } else break;
  }
  return out;
}

const text = (b: Uint8Array | null | undefined) => (b ? Buffer.from(b).toString('utf8') : '');

/** google.rpc.Status {code = 1, message = 2}. */
function decodeStatus(b: Uint8Array): { code?: number; message?: string } {
  const f = fieldsOf(b);
  return { code: f.find((x) => x.no === 1)?.value, message: text(f.find((x) => x.no === 2)?.bytes) || undefined };
}

/** Records of a 200 answer's partial success that the server rejected, with its message. */
function partialSuccess(contentType: string | null, body: Uint8Array): { rejected: number; message: string } {
  if (!body.length) return { rejected: 0, message: '' };
  if (contentType?.startsWith('application/json')) {
    try {
      const j = JSON.parse(Buffer.from(body).toString('utf8')) as Record<string, unknown>;
      const p = (j['partialSuccess'] ?? j['partial_success']) as Record<string, unknown> | undefined;
      if (!p) return { rejected: 0, message: '' };
      const n = Object.entries(p).find(([k]) => k.startsWith('rejected'))?.[1];
      return { rejected: Number(n ?? 0) || 0, message: String(p['errorMessage'] ?? p['error_message'] ?? '') };
    } catch {
      return { rejected: 0, message: '' };
    }
  }
  // Export…ServiceResponse {partial_success = 1 {rejected_* = 1, error_message = 2}}
  const ps = fieldsOf(body).find((x) => x.no === 1)?.bytes;
  if (!ps) return { rejected: 0, message: '' };
  const f = fieldsOf(ps);
  return { rejected: f.find((x) => x.no === 1)?.value ?? 0, message: text(f.find((x) => x.no === 2)?.bytes) };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/**
 * One POST over a keep-alive agent. node:http rather than fetch: a replay is a load generator on
 * the server's machine, and fetch (undici) took about three times node:http's CPU to send the same
 * bodies (testkit/post.ts).
 */
function post(agent: http.Agent, url: URL, headers: Record<string, string>, body: string | Uint8Array, timeoutMs: number): Promise<Answer> {
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = lib.request(
      { agent, protocol: url.protocol, hostname: url.hostname, port: url.port, path: url.pathname + url.search, method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, timeout: timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'TIMEOUT' })));
    req.on('error', reject);
    req.end(body);
  });
}

export class Sender {
  readonly total: Counts = { sent: 0, acknowledged: 0, rejected: 0 };
  readonly bySignal: Partial<Record<Signal, Counts>> = {};
  readonly requests: Counts = { sent: 0, acknowledged: 0, rejected: 0 };
  readonly retries = { refused: 0, network: 0 };
  private readonly reasons = new Map<string, Rejection>();
  private readonly inflight = new Set<Promise<void>>();
  private readonly started = performance.now();
  private unreachable = 0;
  private fatal: Error | null = null;
  /** The last log request sent, answered before the next one goes. */
  private logsTail: Promise<void> = Promise.resolve();

  private readonly agent: http.Agent;

  constructor(private readonly o: SendOptions) {
    const opts = { keepAlive: true, maxSockets: o.concurrency };
    this.agent = o.otlpUrl.startsWith('https:') ? new https.Agent(opts) : new http.Agent(opts);
  }

  rejections(): Rejection[] {
    return [...this.reasons.values()].sort((a, b) => b.records - a.records);
  }

  /** Sends `p` once a slot is free and its time has come (resolves then, not when it is answered). */
  async send(p: Prepared): Promise<void> {
    if (this.fatal) throw this.fatal;
    await this.pace(p);
    if (p.signal === 'logs') await this.logsTail;
    while (this.inflight.size >= this.o.concurrency) await Promise.race(this.inflight);
    if (this.fatal) throw this.fatal;
    this.total.sent += p.records;
    this.counts(p.signal).sent += p.records;
    this.requests.sent++;
    const run = this.deliver(p).finally(() => this.inflight.delete(run));
    this.inflight.add(run);
    if (p.signal === 'logs') this.logsTail = run;
  }

  /** Waits for every request in flight to be answered, and closes the connections. */
  async drain(): Promise<void> {
    while (this.inflight.size) await Promise.race(this.inflight);
    this.agent.destroy();
    if (this.fatal) throw this.fatal;
  }

  private counts(s: Signal): Counts {
    return (this.bySignal[s] ??= { sent: 0, acknowledged: 0, rejected: 0 });
  }

  private async pace(p: Prepared): Promise<void> {
    const elapsedMs = () => performance.now() - this.started;
    if (this.o.rate !== null) {
      const dueMs = (this.total.sent / this.o.rate) * 1000;
      if (dueMs > elapsedMs()) await sleep(dueMs - elapsedMs());
    }
    if (this.o.speed !== null && p.minNs > 0n && this.o.startNs > 0n) {
      const dueMs = Number(p.minNs - this.o.startNs) / 1e6 / this.o.speed;
      if (dueMs > elapsedMs()) await sleep(dueMs - elapsedMs());
    }
  }

  private reject(p: Prepared, records: number, reason: string, wholeRequest: boolean): void {
    this.total.rejected += records;
    this.counts(p.signal).rejected += records;
    if (wholeRequest) this.requests.rejected++;
    const r = this.reasons.get(reason) ?? { reason, records: 0, requests: 0, first: `${p.file}:${p.at}` };
    r.records += records;
    r.requests++;
    this.reasons.set(reason, r);
  }

  private async deliver(p: Prepared): Promise<void> {
    const url = new URL(this.o.otlpUrl.replace(/\/$/, '') + REQUESTS[p.signal].path);
    const headers: Record<string, string> = { 'content-type': p.contentType };
    if (this.o.apiKey) headers['authorization'] = `Bearer ${this.o.apiKey}`;
    const giveUpAt = Date.now() + (this.o.retryForMs ?? 600_000);
    let networkTries = 0;
    for (;;) {
      let res: Answer;
      try {
        res = await post(this.agent, url, headers, p.body, this.o.timeoutMs);
      } catch (err) {
        const e = err as Error & { code?: string };
        const why = e.code ?? e.message;
        if (++networkTries < MAX_NETWORK_TRIES && Date.now() < giveUpAt) {
          this.retries.network++;
          await sleep(250 * 2 ** networkTries);
          continue;
        }
        if (++this.unreachable >= UNREACHABLE_LIMIT) this.fatal ??= new Unreachable(`no answer from ${this.o.otlpUrl} (${why}) for ${UNREACHABLE_LIMIT} requests in a row`);
        this.reject(p, p.records, `no answer from the server: ${why}`, true);
        return;
      }
      this.unreachable = 0;
      const ct = String(res.headers['content-type'] ?? '') || null;
      if (res.status === 200) {
        const ps = partialSuccess(ct, res.body);
        const rejected = Math.min(ps.rejected, p.records);
        this.total.acknowledged += p.records - rejected;
        this.counts(p.signal).acknowledged += p.records - rejected;
        this.requests.acknowledged++;
        if (rejected) this.reject(p, rejected, `partial success: ${ps.message || 'records rejected by the server'}`, false);
        return;
      }
      if ([429, 502, 503, 504].includes(res.status) && Date.now() < giveUpAt) {
        this.retries.refused++;
        const after = Number(res.headers['retry-after']);
        await sleep(1000 * Math.min(MAX_RETRY_AFTER_S, Number.isFinite(after) && after > 0 ? after : 1));
        continue;
      }
      this.reject(p, p.records, reasonOf(res.status, ct, res.body), true);
      return;
    }
  }
}
