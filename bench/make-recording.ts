// npm run harness:recording -- DIR: writes DIR/incident.jsonl, a two-hour recording of three services
// with an incident (testkit/incident.ts), in the OpenTelemetry Collector file exporter's format
// (OTLP/JSON lines). Its timestamps are fixed (2026-01-05 10:00 UTC on), so `tds replay --shift-to now`
// brings it to the present.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { B, BUCKETS, SHIFT_AT, writeIncidentRecording } from '../testkit/incident.js';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node dist/bench/make-recording.js DIR');
  process.exit(2);
}
mkdirSync(dir, { recursive: true });
const first = (Date.UTC(2026, 0, 5, 10, 0, 0) * 1000) / B;
const file = join(dir, 'incident.jsonl');
const requests = writeIncidentRecording(file, first);
console.log(
  JSON.stringify({ file, requests, services: ['frontend', 'checkout', 'payments'], from: new Date((first * B) / 1000).toISOString(), incident_from: new Date(((first + SHIFT_AT) * B) / 1000).toISOString(), to: new Date(((first + BUCKETS) * B) / 1000).toISOString() }, null, 2),
);
