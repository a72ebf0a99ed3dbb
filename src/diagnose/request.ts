// The body of POST /v1/diagnose and /v1/investigate: which services, which window. One parser for
// both paths and the CLI's rules: `services` (1-10) and/or `service` (their union, duplicates
// removed, still at most 10); no timestamps → the last 15 minutes; `from_ts` alone → until now;
// `to_ts` alone or `to_ts <= from_ts` → 400; seconds, milliseconds and nanoseconds → 400 with a hint
// naming the unit the value looks like (the same check as every other `*_ts` input).
import { ApiError, shownValue } from '../core/errors.js';
import { checkMicros, MAX_MICROS, MIN_MICROS } from '../core/time.js';

export const MAX_SERVICES = 10;
export const DEFAULT_WINDOW_US = 15 * 60 * 1_000_000;

export interface DiagnoseRequest {
  services: string[];
  from: number;
  to: number;
}

/** A `*_ts` value as microseconds, or an INVALID_TIMESTAMP error naming the unit it looks like. */
export function microsField(name: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    throw new ApiError('INVALID_TIMESTAMP', `${name} must be an integer, got ${shownValue(v)}`, 'timestamps are whole microseconds since the Unix epoch: 16 digits for current dates');
  }
  if (v < MIN_MICROS || v > MAX_MICROS) {
    const problem = v >= 0 ? checkMicros(v) : null;
    throw new ApiError('INVALID_TIMESTAMP', `${name} ${v} is not in microseconds`, problem?.hint ?? 'timestamps are whole microseconds since the Unix epoch: 16 digits for current dates');
  }
  return v;
}

function serviceNames(body: Record<string, unknown>): string[] {
  const names: string[] = [];
  const list = body['services'];
  if (list !== undefined && list !== null) {
    if (!Array.isArray(list)) throw new ApiError('BAD_REQUEST', 'services must be an array of service names', 'e.g. {"services": ["checkout"]}; names come from GET /v1/services');
    for (const s of list) {
      if (typeof s !== 'string' || s === '') throw new ApiError('BAD_REQUEST', `services holds ${shownValue(s)}, not a service name`, 'each entry is a non-empty string from GET /v1/services');
      names.push(s);
    }
  }
  const one = body['service'];
  if (one !== undefined && one !== null) {
    if (typeof one !== 'string' || one === '') throw new ApiError('BAD_REQUEST', `service must be a non-empty string, got ${shownValue(one)}`, 'e.g. {"service": "checkout"}');
    names.push(one);
  }
  const distinct = [...new Set(names)];
  if (distinct.length === 0) throw new ApiError('BAD_REQUEST', 'no service given', 'send {"services": ["<name>"]} (1 to 10 names from GET /v1/services) or {"service": "<name>"}');
  if (distinct.length > MAX_SERVICES) throw new ApiError('BAD_REQUEST', `${distinct.length} services given; at most ${MAX_SERVICES} per call`, 'split them over several calls');
  return distinct;
}

/** Parses and checks a diagnose request body (raw JSON bytes). `nowUs` is the server's clock. */
export function parseDiagnoseRequest(raw: Buffer | string, nowUs: number): DiagnoseRequest {
  let body: unknown;
  try {
    body = JSON.parse(typeof raw === 'string' ? raw : raw.toString('utf8'));
  } catch {
    throw new ApiError('BAD_REQUEST', 'the body is not valid JSON', 'send a JSON object such as {"services": ["checkout"]}');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ApiError('BAD_REQUEST', 'the body must be a JSON object', 'send a JSON object such as {"services": ["checkout"]}');
  }
  const b = body as Record<string, unknown>;
  const services = serviceNames(b);
  const hasFrom = b['from_ts'] !== undefined && b['from_ts'] !== null;
  const hasTo = b['to_ts'] !== undefined && b['to_ts'] !== null;
  if (hasTo && !hasFrom) throw new ApiError('INVALID_WINDOW', 'to_ts was given without from_ts', 'give both, only from_ts (the window then ends now), or neither (the last 15 minutes)');
  const from = hasFrom ? microsField('from_ts', b['from_ts']) : nowUs - DEFAULT_WINDOW_US;
  const to = hasTo ? microsField('to_ts', b['to_ts']) : nowUs;
  if (to <= from) throw new ApiError('INVALID_WINDOW', `to_ts (${to}) must be greater than from_ts (${from})`, hasTo ? 'swap them, or leave to_ts out to end the window now' : 'from_ts is in the future; leave it out for the last 15 minutes');
  return { services, from, to };
}
