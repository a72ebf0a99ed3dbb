// The body of POST /v1/diagnose and /v1/investigate: which services, which window. One parser for
// both paths and the CLI's rules: `services` (1-10) and/or `service` (their union, duplicates
// removed, still at most 10); no timestamps → the last 15 minutes; `from_ts` alone → until now;
// `to_ts` alone or `to_ts <= from_ts` → 400; seconds, milliseconds and nanoseconds → 400 with a hint
// naming the unit the value looks like (the same check as every other `*_ts` input). `detail` picks
// the full block (default) or the compact view; `max_bytes` bounds the compact view only.
// `baseline_from_ts`/`baseline_to_ts` (both or neither, before the window) name the baseline.
import { ApiError, shownValue } from '../core/errors.js';
import { checkMicros, MAX_MICROS, MIN_MICROS } from '../core/time.js';

export const MAX_SERVICES = 10;
export const DEFAULT_WINDOW_US = 15 * 60 * 1_000_000;

/** What a diagnose call answers: the full block per service (the default) or the compact view. */
export const DETAILS = ['full', 'findings'] as const;
export type Detail = (typeof DETAILS)[number];

/** The smallest byte budget accepted: about one service's compact view with nothing left to drop. */
export const MIN_MAX_BYTES = 2048;
/** The largest: ten full blocks' worth (block.ts bounds each at 64 KiB), beyond which a budget means nothing. */
export const MAX_MAX_BYTES = MAX_SERVICES * 64 * 1024;

/** What is diagnosed. */
export interface DiagnoseRequest {
  services: string[];
  from: number;
  to: number;
  /** A stretch the agent knows was good (`baseline_from_ts`/`baseline_to_ts`): every comparison's baseline; absent, the service chooses. */
  reference?: { from: number; to: number };
}

/** A call's whole body: what is diagnosed and how the answer is shown. */
export interface DiagnoseCall extends DiagnoseRequest {
  detail: Detail;
  /** The compact view's byte budget; null for none. */
  maxBytes: number | null;
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
export function parseDiagnoseRequest(raw: Buffer | string, nowUs: number): DiagnoseCall {
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
  const detail = detailField(b['detail']);
  const reference = referenceFields(b, from);
  return { services, from, to, ...(reference ? { reference } : {}), detail, maxBytes: maxBytesField(b['max_bytes'], detail) };
}

/** `baseline_from_ts`/`baseline_to_ts`: both or neither, in microseconds, ending at or before the window's start. */
function referenceFields(b: Record<string, unknown>, from: number): { from: number; to: number } | null {
  const has = (k: string) => b[k] !== undefined && b[k] !== null;
  if (!has('baseline_from_ts') && !has('baseline_to_ts')) return null;
  if (!has('baseline_from_ts') || !has('baseline_to_ts')) {
    throw new ApiError('INVALID_WINDOW', 'baseline_from_ts and baseline_to_ts come together', 'give both to name a good stretch (before a deploy, yesterday), or neither to let the service choose');
  }
  const lo = microsField('baseline_from_ts', b['baseline_from_ts']);
  const hi = microsField('baseline_to_ts', b['baseline_to_ts']);
  if (hi <= lo) throw new ApiError('INVALID_WINDOW', `baseline_to_ts (${hi}) must be greater than baseline_from_ts (${lo})`, 'swap them');
  if (hi > from) throw new ApiError('INVALID_WINDOW', `the baseline (ending ${hi}) must end at or before the window's start (${from})`, 'name a stretch before the window, such as the hour before a deploy');
  return { from: lo, to: hi };
}

function detailField(v: unknown): Detail {
  if (v === undefined || v === null) return 'full';
  if (typeof v !== 'string' || !(DETAILS as readonly string[]).includes(v)) {
    throw new ApiError('BAD_REQUEST', `detail must be one of ${DETAILS.join(', ')}, got ${shownValue(v)}`, '"findings" for the compact view (findings, anomalous operations, coverage, events); "full" (the default) for the whole block');
  }
  return v as Detail;
}

function maxBytesField(v: unknown, detail: Detail): number | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < MIN_MAX_BYTES || v > MAX_MAX_BYTES) {
    throw new ApiError('BAD_REQUEST', `max_bytes must be a whole number of bytes from ${MIN_MAX_BYTES} to ${MAX_MAX_BYTES}, got ${shownValue(v)}`, 'e.g. "detail": "findings", "max_bytes": 32768 (about 10,000 tokens)');
  }
  if (detail !== 'findings') throw new ApiError('BAD_REQUEST', 'max_bytes bounds the compact view only', 'add "detail": "findings"; the full block is bounded by itself (64 KiB a service)');
  return v;
}
