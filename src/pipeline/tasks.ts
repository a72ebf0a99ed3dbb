// The messages between the event loop and the decode workers. Bodies go in and CSV comes out as
// transferred buffers; failures come back as values (codes survive; thrown errors lose them).
import type { ServiceSpans } from '../store/batch.js';
import type { EncodedPart } from '../store/writer.js';
import type { DecodeErrorCode } from './decode/decode-error.js';

export type Signal = 'traces' | 'logs' | 'metrics';
export type Encoding = 'protobuf' | 'json';

export interface OtlpTask {
  kind: 'otlp';
  signal: Signal;
  encoding: Encoding;
  gzip: boolean;
  body: Uint8Array;
  /** Largest decompressed size accepted. */
  maxBytes: number;
  /** Whose log miner mines it (logs only); open mode's is `default`. */
  tenant?: string;
}

export type IngestFailureCode = DecodeErrorCode | 'INTERNAL';

export interface IngestFailure {
  ok: false;
  code: IngestFailureCode;
  message: string;
  hint?: string;
}

export interface IngestSuccess {
  ok: true;
  parts: EncodedPart[];
  services: ServiceSpans;
  /** 5-minute buckets the rows fall in (for the detection pass). */
  buckets: number[];
  /** Records (spans, log records, data points, samples) accepted. */
  accepted: number;
  /** Records rejected as invalid (OTLP partial success). */
  rejected: number;
  errorMessage?: string;
  /** Logs: the templates whose rows this result carries (told back to the miner if they are not committed). */
  templates?: number[];
}

export type IngestResult = IngestSuccess | IngestFailure;

/** A decoded and encoded body: what a success carries. */
export type EncodedBody = Omit<IngestSuccess, 'ok'>;
