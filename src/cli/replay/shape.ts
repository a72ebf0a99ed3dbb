// What `tds replay` needs to know of an OTLP export request, one table for both encodings (the
// protobuf field numbers and the OTLP/JSON keys, lowerCamelCase and snake_case): where the records
// are (spans, log records, data points, profile samples, counted as the server counts them), where
// every timestamp is (fixed64 nanoseconds, shifted by one constant), and where the resource is
// (its service.name gets the service prefix). Field numbers from opentelemetry-proto (proto/).

export type Signal = 'traces' | 'logs' | 'metrics' | 'profiles';

export const SIGNALS: readonly Signal[] = ['traces', 'logs', 'metrics', 'profiles'];

/** A message type, as far as replay walks it. */
export interface Shape {
  /** Submessages walked into: field number, JSON keys, their shape. */
  children: readonly Child[];
  /** fixed64 nanosecond timestamps (a repeated one is packed): field number, JSON keys. */
  times: readonly Time[];
  /** Each message of this shape is one record. */
  record?: boolean;
  /**
   * The wire types of every field of the message (0 varint, 1 fixed64, 2 length-delimited, 5
   * fixed32): a protobuf file whose signal its name does not tell is read as the signal whose
   * messages all agree with these (replay/wire.ts).
   */
  wire?: Readonly<Record<number, readonly number[]>>;
  /** Whether a message that agrees with `wire` also shows it is of this type (its typical fields). */
  shows?(has: Has): boolean;
}

/** Whether a message has field `no` (of wire type `wt`, of `len` bytes, when given). */
export type Has = (no: number, wt?: number, len?: number) => boolean;

export interface Child {
  no: number;
  keys: readonly [string, string];
  shape: Shape | 'resource';
}

export interface Time {
  no: number;
  keys: readonly [string, string];
  repeated?: boolean;
}

const child = (no: number, camel: string, snake: string, shape: Shape | 'resource'): Child => ({ no, keys: [camel, snake], shape });
const time = (no: number, camel: string, snake: string, repeated = false): Time => ({ no, keys: [camel, snake], repeated });
const shape = (children: Child[], times: Time[] = [], record = false): Shape => ({ children, times, record });

const resourceOf = (scopes: Child): Shape => shape([child(1, 'resource', 'resource', 'resource'), scopes]);

const event = shape([], [time(1, 'timeUnixNano', 'time_unix_nano')]);
const LEN = [2];
const VARINT = [0];
const FIXED64 = [1];
const FIXED32 = [5];
const PACKED = [0, 2];
const span: Shape = {
  ...shape([child(11, 'events', 'events', event)], [time(7, 'startTimeUnixNano', 'start_time_unix_nano'), time(8, 'endTimeUnixNano', 'end_time_unix_nano')], true),
  wire: { 1: LEN, 2: LEN, 3: LEN, 4: LEN, 5: LEN, 6: VARINT, 7: FIXED64, 8: FIXED64, 9: LEN, 10: VARINT, 11: LEN, 12: VARINT, 13: LEN, 14: VARINT, 15: LEN, 16: FIXED32 },
  shows: (has) => has(1, 2, 16) && has(2, 2, 8), // a trace id and a span id
};
const logRecord: Shape = {
  ...shape([], [time(1, 'timeUnixNano', 'time_unix_nano'), time(11, 'observedTimeUnixNano', 'observed_time_unix_nano')], true),
  wire: { 1: FIXED64, 2: VARINT, 3: LEN, 5: LEN, 6: LEN, 7: VARINT, 8: FIXED32, 9: LEN, 10: LEN, 11: FIXED64, 12: LEN },
  shows: (has) => has(1, 1) || has(11, 1) || has(5, 2), // a time or a body
};

const exemplar = shape([], [time(2, 'timeUnixNano', 'time_unix_nano')]);
const pointTimes = [time(2, 'startTimeUnixNano', 'start_time_unix_nano'), time(3, 'timeUnixNano', 'time_unix_nano')];
const point = (exemplarsNo: number | null) => shape(exemplarsNo === null ? [] : [child(exemplarsNo, 'exemplars', 'exemplars', exemplar)], pointTimes, true);
const points = (p: Shape) => shape([child(1, 'dataPoints', 'data_points', p)]);
const metric: Shape = {
  ...shape([
    child(5, 'gauge', 'gauge', points(point(5))),
    child(7, 'sum', 'sum', points(point(5))),
    child(9, 'histogram', 'histogram', points(point(8))),
    child(10, 'exponentialHistogram', 'exponential_histogram', points(point(11))),
    child(11, 'summary', 'summary', points(point(null))),
  ]),
  wire: { 1: LEN, 2: LEN, 3: LEN, 5: LEN, 7: LEN, 9: LEN, 10: LEN, 11: LEN, 12: LEN },
  shows: (has) => has(1, 2) && [5, 7, 9, 10, 11].some((n) => has(n, 2)), // a name and data
};

const sample: Shape = { ...shape([], [time(5, 'timestampsUnixNano', 'timestamps_unix_nano', true)], true), wire: { 1: VARINT, 2: PACKED, 3: VARINT, 4: PACKED, 5: [1, 2] } };
const profile: Shape = {
  ...shape([child(2, 'samples', 'samples', sample)], [time(3, 'timeUnixNano', 'time_unix_nano')]),
  wire: { 1: LEN, 2: LEN, 3: FIXED64, 4: VARINT, 5: LEN, 6: VARINT, 7: LEN, 8: VARINT, 9: LEN, 10: LEN, 11: PACKED },
  shows: (has) => has(3, 1) || has(2, 2), // a time or samples
};

/** The export request of each signal: its shape, its top-level JSON keys, its OTLP/HTTP path. */
export const REQUESTS: Record<Signal, { shape: Shape; keys: readonly [string, string]; path: string }> = {
  traces: {
    shape: shape([child(1, 'resourceSpans', 'resource_spans', resourceOf(child(2, 'scopeSpans', 'scope_spans', shape([child(2, 'spans', 'spans', span)]))))]),
    keys: ['resourceSpans', 'resource_spans'],
    path: '/v1/traces',
  },
  logs: {
    shape: shape([child(1, 'resourceLogs', 'resource_logs', resourceOf(child(2, 'scopeLogs', 'scope_logs', shape([child(2, 'logRecords', 'log_records', logRecord)]))))]),
    keys: ['resourceLogs', 'resource_logs'],
    path: '/v1/logs',
  },
  metrics: {
    shape: shape([child(1, 'resourceMetrics', 'resource_metrics', resourceOf(child(2, 'scopeMetrics', 'scope_metrics', shape([child(2, 'metrics', 'metrics', metric)]))))]),
    keys: ['resourceMetrics', 'resource_metrics'],
    path: '/v1/metrics',
  },
  profiles: {
    shape: shape([child(1, 'resourceProfiles', 'resource_profiles', resourceOf(child(2, 'scopeProfiles', 'scope_profiles', shape([child(2, 'profiles', 'profiles', profile)]))))]),
    keys: ['resourceProfiles', 'resource_profiles'],
    path: '/v1development/profiles',
  },
};

/** The service name a resource without one stands for, as the server reads it. */
export const UNKNOWN_SERVICE = 'unknown_service';
