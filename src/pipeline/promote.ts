// Promoted columns: the attribute-derived columns of src/store/schema.ts that later analyses read
// (service identity, k8s names, error classification, HTTP/RPC/DB/peer, gen_ai). One place decides
// how each is derived; the OTLP decoders (protobuf and JSON) pick the keys listed here while
// decoding attributes and call these functions, so both encodings give the same rows.
import { OPERATION_ATTRIBUTE_KEYS, SPAN_KIND, deriveOperation, peerOf, type AttrLookup } from './operation.js';

export const DEFAULT_SERVICE_NAME = 'unknown_service';

/** Resource attribute keys read by promoteResource. */
export const RESOURCE_KEYS: readonly string[] = [
  'service.name',
  'service.namespace',
  'service.version',
  'service.instance.id',
  'deployment.environment.name',
  'deployment.environment',
  'k8s.namespace.name',
  'k8s.deployment.name',
  'k8s.pod.name',
  'k8s.container.name',
  'container.name',
  'container.image.name',
  'container.image.tag',
  'container.image.tags',
  'host.name',
];

/** Column names of the resource-promoted block, in schema order (RESOURCE_PROMOTED in schema.ts). */
export const RESOURCE_COLUMNS = [
  'service_namespace',
  'service_version',
  'service_instance_id',
  'deployment_environment',
  'k8s_namespace',
  'k8s_deployment',
  'k8s_pod_name',
  'container_name',
  'container_image',
  'host_name',
] as const;

export interface PromotedResource {
  serviceName: string;
  /** Values of RESOURCE_COLUMNS, same order. */
  columns: (string | null)[];
}

function s(v: unknown): string | null {
  if (typeof v === 'string') return v.length > 0 ? v : null;
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  return null;
}

function int(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? Math.trunc(v) : null;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string' && /^-?\d+$/.test(v.trim())) return Number(v.trim());
  return null;
}

function bigintOrNumber(v: unknown): number | bigint | null {
  if (typeof v === 'bigint') return v;
  return int(v);
}

export function promoteResource(a: AttrLookup): PromotedResource {
  const tag = a['container.image.tag'] ?? (Array.isArray(a['container.image.tags']) ? a['container.image.tags'][0] : undefined);
  const image = s(a['container.image.name']);
  const imageTag = s(tag);
  return {
    serviceName: s(a['service.name']) ?? DEFAULT_SERVICE_NAME,
    columns: [
      s(a['service.namespace']),
      s(a['service.version']),
      s(a['service.instance.id']),
      s(a['deployment.environment.name']) ?? s(a['deployment.environment']),
      s(a['k8s.namespace.name']),
      s(a['k8s.deployment.name']),
      s(a['k8s.pod.name']),
      s(a['k8s.container.name']) ?? s(a['container.name']),
      image === null ? null : imageTag === null ? image : image + ':' + imageTag,
      s(a['host.name']),
    ],
  };
}

/** Span attribute keys read by promoteSpan and deriveOperation. */
export const SPAN_KEYS: readonly string[] = [
  ...OPERATION_ATTRIBUTE_KEYS,
  'http.response.status_code',
  'http.status_code',
  'rpc.system',
  'rpc.grpc.status_code',
  'error.type',
  'exception.type',
  'gen_ai.system',
  'gen_ai.provider.name',
  'gen_ai.operation.name',
  'gen_ai.request.model',
  'gen_ai.response.model',
  'gen_ai.usage.input_tokens',
  'gen_ai.usage.output_tokens',
  'gen_ai.usage.prompt_tokens',
  'gen_ai.usage.completion_tokens',
  'gen_ai.response.finish_reasons',
];

/** Promoted span columns, named as in schema.ts. */
export interface PromotedSpan {
  operation: string;
  is_error: boolean;
  error_type: string | null;
  http_method: string | null;
  http_route: string | null;
  http_status_code: number | null;
  rpc_service: string | null;
  rpc_method: string | null;
  peer_service: string | null;
  db_system: string | null;
  gen_ai_system: string | null;
  gen_ai_operation: string | null;
  gen_ai_model: string | null;
  gen_ai_input_tokens: number | bigint | null;
  gen_ai_output_tokens: number | bigint | null;
  gen_ai_finish_reasons: string | null;
}

const GRPC_CODES = [
  'OK', 'CANCELLED', 'UNKNOWN', 'INVALID_ARGUMENT', 'DEADLINE_EXCEEDED', 'NOT_FOUND', 'ALREADY_EXISTS',
  'PERMISSION_DENIED', 'RESOURCE_EXHAUSTED', 'FAILED_PRECONDITION', 'ABORTED', 'OUT_OF_RANGE',
  'UNIMPLEMENTED', 'INTERNAL', 'UNAVAILABLE', 'DATA_LOSS', 'UNAUTHENTICATED',
];

/**
 * Span promotion. `exceptionType` is the `exception.type` of the span's first `exception` event
 * (the decoders find it while decoding events).
 *
 * error_type (only on error spans, status_code 2): exception.type from an exception event, else the
 * `error.type` attribute, else `HTTP <code>` for an HTTP status >= 400, else `gRPC <code> <NAME>` for
 * a non-zero rpc.grpc.status_code, else null.
 */
export function promoteSpan(kind: number, name: string, statusCode: number, a: AttrLookup, exceptionType: string | null): PromotedSpan {
  const isError = statusCode === 2;
  const httpStatus = int(a['http.response.status_code'] ?? a['http.status_code']);
  let errorType: string | null = null;
  if (isError) {
    errorType = exceptionType ?? s(a['exception.type']) ?? s(a['error.type']);
    if (errorType === null && httpStatus !== null && httpStatus >= 400) errorType = 'HTTP ' + httpStatus;
    if (errorType === null) {
      const g = int(a['rpc.grpc.status_code']);
      if (g !== null && g !== 0) errorType = 'gRPC ' + g + (GRPC_CODES[g] ? ' ' + GRPC_CODES[g] : '');
    }
  }
  const method = s(a['http.request.method']) ?? s(a['http.method']);
  const client = kind === SPAN_KIND.CLIENT || kind === SPAN_KIND.PRODUCER;
  let finish: string | null = null;
  const fr = a['gen_ai.response.finish_reasons'];
  if (Array.isArray(fr)) finish = JSON.stringify(fr.map((x) => (typeof x === 'string' ? x : String(x))));
  else if (typeof fr === 'string' && fr.length > 0) finish = fr.startsWith('[') ? normaliseJsonArray(fr) : JSON.stringify([fr]);
  return {
    operation: deriveOperation(kind, name, a),
    is_error: isError,
    error_type: errorType,
    http_method: method === null ? null : method.toUpperCase(),
    http_route: s(a['http.route']),
    http_status_code: httpStatus,
    rpc_service: s(a['rpc.service']),
    rpc_method: s(a['rpc.method']),
    peer_service: s(a['peer.service']) ?? (client ? peerOf(a) : null),
    db_system: s(a['db.system.name']) ?? s(a['db.system']),
    gen_ai_system: s(a['gen_ai.provider.name']) ?? s(a['gen_ai.system']),
    gen_ai_operation: s(a['gen_ai.operation.name']),
    gen_ai_model: s(a['gen_ai.request.model']) ?? s(a['gen_ai.response.model']),
    gen_ai_input_tokens: bigintOrNumber(a['gen_ai.usage.input_tokens'] ?? a['gen_ai.usage.prompt_tokens']),
    gen_ai_output_tokens: bigintOrNumber(a['gen_ai.usage.output_tokens'] ?? a['gen_ai.usage.completion_tokens']),
    gen_ai_finish_reasons: finish,
  };
}

function normaliseJsonArray(text: string): string {
  try {
    const v: unknown = JSON.parse(text);
    if (Array.isArray(v)) return JSON.stringify(v.map((x) => (typeof x === 'string' ? x : String(x))));
  } catch {
    /* not JSON: keep as one reason */
  }
  return JSON.stringify([text]);
}

const ERROR_TEXTS = new Set(['ERROR', 'ERR', 'FATAL', 'CRITICAL', 'CRIT', 'ALERT', 'EMERG', 'EMERGENCY', 'PANIC', 'SEVERE']);

/** Severity numbers of the level words a body may start with (OpenTelemetry's ranges: the first of each). */
const LEVEL_NUMBERS: Record<string, number> = {
  TRACE: 1,
  DEBUG: 5,
  INFO: 9,
  NOTICE: 10,
  WARN: 13,
  WARNING: 13,
  ERROR: 17,
  ERR: 17,
  SEVERE: 17,
  CRITICAL: 21,
  FATAL: 21,
  PANIC: 21,
};
// A level word near the start of a body: upper-case and standing alone (`2026-… ERROR [svc,…]`,
// `[WARN]`, `<ERROR>`), or the value of a level key in logfmt or JSON (`level=error`, `"level":"warn"`).
const LEVEL_WORD = /(?:^|[\s\[(<|])(TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|SEVERE|CRITICAL|FATAL|PANIC)(?=$|[\s\]):>|,])|\b(?:level|lvl|severity)"?\s*[=:]\s*"?([A-Za-z]+)/;

/**
 * The level a record's body states when the sender set no severity, as [severity_number,
 * severity_text], or null. Only the first 160 characters are read: a level word further in is part
 * of the message ("retrying after ERROR from upstream"), not the record's level.
 */
export function levelFromBody(body: string | null): [number, string] | null {
  if (body === null || body.length === 0) return null;
  const m = LEVEL_WORD.exec(body.length > 160 ? body.slice(0, 160) : body);
  if (!m) return null;
  const word = (m[1] ?? m[2]!).toUpperCase();
  const n = LEVEL_NUMBERS[word];
  return n === undefined ? null : [n, word];
}

/** A log is an error when severity_number >= 17 (ERROR..FATAL4) or its severity text names an error level. */
export function logIsError(severityNumber: number, severityText: string | null): boolean {
  if (severityNumber >= 17) return true;
  return severityText !== null && severityText.length > 0 && severityText.length <= 9 && ERROR_TEXTS.has(severityText.toUpperCase());
}
