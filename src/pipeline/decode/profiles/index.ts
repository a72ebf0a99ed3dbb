// Profile ingest, decoding half: what the HTTP/gRPC routes call once they have the payload bytes
// (multipart field `profile` extracted, content type checked). Every failure is a
// DecodeError with a stable code (errors.ts); everything else is a bug.
//
//   ingestPyroscopeBody(body, query)  POST /, /ingest, /ingest/pyroscope, /push.v1.PusherService/Push
//   ingestOtlpProfiles(body)          OTLP ExportProfilesServiceRequest (gRPC or POST /v1development/profiles)
//
// Both are synchronous CPU work: run them in the worker pool.
import { DEFAULT_MAX_ITEMS, sampleCount, type DecodedPprof, type PprofDecoder } from './decoded.js';
import { DecodeError } from '../decode-error.js';
import { DEFAULT_MAX_DECOMPRESSED, maybeGunzip, profileBytes } from './body.js';
import { otlpProfilesToRows } from './otlp.js';
import { decodePushRequest, ingestParams, parsePyroscopeName, type IngestQuery } from './pyroscope.js';
import { pprofToRows, type ProfileRow, type RowOptions } from './rows.js';
import { wasmDecoder } from './wasm.js';

export { DecodeError, type DecodeErrorCode } from '../decode-error.js';
export { hotSpots, pprofToRows, type HotSpot, type ProfileRow, type RowOptions } from './rows.js';
export { parsePyroscopeName, decodePushRequest, type IngestQuery, type PushSeries } from './pyroscope.js';
export { referenceDecoder } from './reference.js';
export { wasmDecoder } from './wasm.js';
export type { DecodedPprof, PprofDecoder } from './decoded.js';
export { DEFAULT_MAX_DECOMPRESSED } from './body.js';

export interface DecodeOptions {
  /** Default: the WASM decoder. */
  decoder?: PprofDecoder;
  /** Cap on each decompressed payload (bytes); above it TOO_LARGE. Default 20 MiB. */
  maxDecompressed?: number;
  /** Cap on decoded elements per profile; above it TOO_LARGE. */
  maxItems?: number;
  /** Clock for rows of profiles that carry no time (µs). */
  nowUs?: () => number;
}

export interface ProfileIngestResult {
  rows: ProfileRow[];
  /** pprof profiles (or OTLP Profile messages) decoded. */
  profiles: number;
  /** Samples across them. */
  samples: number;
  /** Distinct service names of the rows. */
  services: string[];
}

/** gunzip (capped) + legacy-format refusal + decode. */
export function decodePprof(body: Uint8Array, opts: DecodeOptions = {}): DecodedPprof {
  const bytes = profileBytes(body, opts.maxDecompressed ?? DEFAULT_MAX_DECOMPRESSED);
  return (opts.decoder ?? wasmDecoder).decode(bytes, opts.maxItems ?? DEFAULT_MAX_ITEMS);
}

/** One raw pprof body → rows. Throws EMPTY for a profile without samples. */
export function pprofBodyToRows(body: Uint8Array, rowOpts: RowOptions, opts: DecodeOptions = {}): { rows: ProfileRow[]; samples: number } {
  const d = decodePprof(body, opts);
  const samples = sampleCount(d);
  if (samples === 0) throw new DecodeError('EMPTY', 'profile has no samples', 'send a profile with at least one sample');
  const ro = opts.nowUs && !rowOpts.nowUs ? { ...rowOpts, nowUs: opts.nowUs } : rowOpts;
  return { rows: pprofToRows(d, ro), samples };
}

function services(rows: ProfileRow[]): string[] {
  return [...new Set(rows.map((r) => r.service_name))];
}

/**
 * The four Pyroscope-compatible ingest paths. With `query.name`: the body is one raw pprof profile
 * (gzip or not), service = name before `{`, brace labels → attributes (plus spy_name). Without:
 * the body is a push.v1.PushRequest (protobuf or Connect JSON, optionally gzip), every series must
 * carry service_name; its other labels → attributes; RawSample.ID → profile_id.
 * from/until (timestamp, duration) and sampleRate apply to both; format other than pprof is refused.
 */
export function ingestPyroscopeBody(body: Uint8Array, query: IngestQuery, opts: DecodeOptions = {}): ProfileIngestResult {
  if (body.length === 0) throw new DecodeError('EMPTY', 'empty request body', 'send a pprof profile or a push.v1.PushRequest');
  const params = ingestParams(query);
  const name = query.name;
  if (name !== undefined && name !== null && name !== '') {
    const { service, labels } = parsePyroscopeName(name);
    const attributes: Record<string, string> = { ...labels };
    if (query.spyName) attributes['spy_name'] = query.spyName;
    const { rows, samples } = pprofBodyToRows(body, { service, attributes, source: 'pyroscope', ...params }, opts);
    return { rows, profiles: 1, samples, services: [service] };
  }
  const max = opts.maxDecompressed ?? DEFAULT_MAX_DECOMPRESSED;
  const series = decodePushRequest(maybeGunzip(body, max));
  const rows: ProfileRow[] = [];
  let profiles = 0;
  let samples = 0;
  for (const s of series) {
    const service = (s.labels['service_name'] ?? '').trim();
    if (!service) {
      throw new DecodeError('MISSING_SERVICE_NAME', 'a push series has no service_name label', 'add a service_name label to every series');
    }
    const attributes: Record<string, string> = { ...s.labels };
    delete attributes['service_name'];
    if (query.spyName) attributes['spy_name'] = query.spyName;
    for (const raw of s.samples) {
      if (raw.rawProfile.length === 0) continue;
      const d = decodePprof(raw.rawProfile, opts);
      const n = sampleCount(d);
      if (n === 0) continue;
      profiles++;
      samples += n;
      const out = pprofToRows(d, {
        service,
        attributes,
        source: 'pyroscope',
        profileId: raw.id || null,
        ...params,
        ...(opts.nowUs ? { nowUs: opts.nowUs } : {}),
      });
      for (const r of out) rows.push(r);
    }
  }
  if (samples === 0) throw new DecodeError('EMPTY', 'push request carries no profile samples', 'send at least one series with a non-empty raw_profile');
  return { rows, profiles, samples, services: services(rows) };
}

/** OTLP profiles request bytes (optionally gzip) → rows. An empty request is valid (OTLP semantics): no rows. */
export function ingestOtlpProfiles(body: Uint8Array, opts: DecodeOptions & { defaultService?: string } = {}): ProfileIngestResult {
  const bytes = maybeGunzip(body, opts.maxDecompressed ?? DEFAULT_MAX_DECOMPRESSED);
  const r = otlpProfilesToRows(bytes, {
    ...(opts.defaultService ? { defaultService: opts.defaultService } : {}),
    ...(opts.maxItems ? { maxItems: opts.maxItems } : {}),
    ...(opts.nowUs ? { nowUs: opts.nowUs } : {}),
  });
  return { rows: r.rows, profiles: r.profiles, samples: r.samples, services: services(r.rows) };
}
