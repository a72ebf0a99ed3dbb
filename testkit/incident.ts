// A history with an incident, as OTLP/JSON requests: frontend → checkout → payments, 60 traces a
// 5-minute bucket over two hours; from bucket SHIFT_AT on, payments fails (1% → 30%) and slows
// (20 → 60 ms) and logs its failures. Deterministic (seeded, ids included): the recording of
// README's "Benchmark harness" loop (bench/make-recording.ts) and of the harness tests.
import { appendFileSync } from 'node:fs';
import { logsJson, tracesJson, type JsonLog, type JsonSpan } from './otlp-json.js';
import { rng } from './rng.js';

export const B = 300_000_000;
export const BUCKETS = 24;
export const SHIFT_AT = 16;

/** The requests of the history whose first bucket is `first` (a bucket index). */
export function history(first: number): { signal: 'traces' | 'logs'; body: string }[] {
  const r = rng(21);
  const out: { signal: 'traces' | 'logs'; body: string }[] = [];
  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(r() * 16).toString(16)).join('');
  for (let b = 0; b < BUCKETS; b++) {
    const t0 = (first + b) * B;
    const bad = b >= SHIFT_AT;
    const spans: Record<string, JsonSpan[]> = { frontend: [], checkout: [], payments: [] };
    const logs: JsonLog[] = [];
    for (let i = 0; i < 60; i++) {
      const ts = t0 + Math.floor(r() * (B - 5_000_000));
      const traceId = hex(32);
      const [f, c, p] = [hex(16), hex(16), hex(16)];
      const fails = r() < (bad ? 0.3 : 0.01);
      const payUs = Math.floor((bad ? 60_000 : 20_000) * (0.8 + 0.4 * r()));
      spans.frontend!.push({ name: 'GET /buy', startUs: ts, durationUs: payUs + 8000, error: fails, traceId, spanId: f, attributes: { 'http.request.method': 'GET', 'http.route': '/buy' } });
      spans.checkout!.push({ name: 'POST /order', startUs: ts + 1000, durationUs: payUs + 5000, error: fails, traceId, spanId: c, parentSpanId: f, attributes: { 'http.request.method': 'POST', 'http.route': '/order' } });
      spans.payments!.push({ name: 'POST /charge', startUs: ts + 2000, durationUs: payUs, error: fails, traceId, spanId: p, parentSpanId: c, attributes: { 'http.request.method': 'POST', 'http.route': '/charge' } });
      logs.push({ timeUs: ts + 2500, body: fails ? `charge ${i} failed: gateway timeout after ${payUs} us` : `charge ${i} ok`, severity: fails ? 17 : 9, severityText: fails ? 'ERROR' : 'INFO' });
    }
    for (const [svc, list] of Object.entries(spans)) out.push({ signal: 'traces', body: tracesJson(svc, list) });
    out.push({ signal: 'logs', body: logsJson('payments', logs) });
  }
  return out;
}


/** Writes the history as a recording in the Collector file exporter's format (OTLP/JSON lines). */
export function writeIncidentRecording(file: string, first: number): number {
  const requests = history(first);
  for (const r of requests) appendFileSync(file, r.body + '\n');
  return requests.length;
}
