// The MCP tools: one definition, served over stdio (`tds mcp`) and Streamable HTTP (`/mcp`). Each
// tool is a thin call of one API endpoint through the shared client (client/api.ts), so both transports run the same code
// and every rule, cap and error hint stays where the endpoint has it. Input schemas come from the route
// table (api/endpoints.ts) wherever the endpoint takes the same fields; the service validates them
// and its 400 answers come back as tool errors carrying its code, message and hint.
import { API } from '../api/endpoints.js';
import type { Endpoint } from '../api/endpoint.js';
import { DiagnoseRequest, type DiagnoseBody } from '../api/schemas.js';
import { resolved } from '../core/schema.js';
import { signalNames } from '../diagnose/block-schema.js';
import { errorBody, type ErrorBody } from '../core/errors.js';
import { anomalyWindow, type ApiClient, type Outcome } from '../client/api.js';
import type { AlertStatus } from '../detect/alerts.js';
import { QUERYABLE_TABLES } from '../store/schema.js';
import { MINUTE_US } from '../core/time.js';
import { anomalyPageSql } from '../detect/incidents.js';
import { DIAGNOSE_MAX_BYTES, MAX_TOOL_BYTES, MIN_TOOL_BYTES, ROWS_MAX_BYTES, approxTokens, pageSql, rowsWithin } from './budget.js';

export type ToolAnswer = { ok: true; value: unknown } | { ok: false; error: ErrorBody };

type Schema = Record<string, unknown>;

export interface ToolDef {
  name: string;
  title: string;
  description: string;
  inputSchema: Schema & { type: 'object' };
  run(args: Record<string, unknown>, api: ApiClient, nowUs: number): Promise<ToolAnswer>;
}

/** A request the tool refuses before calling the service; becomes a tool error like the service's own. */
class ToolInputError extends Error {
  constructor(message: string, readonly hint: string) {
    super(message);
  }
}

/** Rows the query tool returns unless max_rows says otherwise: enough to act on, small enough for a context window. */
export const DEFAULT_MAX_ROWS = 200;
const MAX_ROWS = 10_000;

/** Drops OpenAPI extension keywords (`x-unit`, `x-error-code`): tool schemas are plain JSON Schema. */
export function plainSchema(s: unknown): any {
  if (Array.isArray(s)) return s.map(plainSchema);
  if (!s || typeof s !== 'object') return s;
  return Object.fromEntries(Object.entries(s).filter(([k]) => !k.startsWith('x-')).map(([k, v]) => [k, plainSchema(v)]));
}

/** A tool property from a query/path parameter of an endpoint. */
function param(endpoint: Pick<Endpoint, 'params'>, name: string): Schema {
  const p = endpoint.params?.[name];
  if (!p) throw new Error(`no parameter ${name} in the route table`);
  return plainSchema({ ...p.schema, ...(p.description ? { description: p.description } : {}) });
}

const lastMinutes: Schema = {
  type: 'integer',
  minimum: 1,
  maximum: 7 * 24 * 60,
  description: 'the window is the last N minutes until now; instead of from_ts/to_ts (saves computing microsecond timestamps)',
};

function optionalString(args: Record<string, unknown>, name: string, hint: string): string | undefined {
  const v = args[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new ToolInputError(`${name} must be a string, got ${JSON.stringify(v)}`, hint);
  return v;
}

function requiredString(args: Record<string, unknown>, name: string, hint: string): string {
  const v = optionalString(args, name, hint);
  if (v === undefined || v.trim() === '') throw new ToolInputError(`${name} is required`, hint);
  return v;
}

/** The `max_bytes` argument of a row-listing tool. */
const rowsMaxBytes: Schema = {
  type: 'integer',
  minimum: MIN_TOOL_BYTES,
  maximum: MAX_TOOL_BYTES,
  description: `most bytes of JSON the answer may take (default ${ROWS_MAX_BYTES}, about ${approxTokens(ROWS_MAX_BYTES)} tokens); rows past it are cut, with truncated: true and next_sql, the query tool's statement for the next ones`,
};

function maxBytes(args: Record<string, unknown>, fallback: number): number {
  const v = args['max_bytes'] ?? fallback;
  if (!Number.isInteger(v) || (v as number) < MIN_TOOL_BYTES || (v as number) > MAX_TOOL_BYTES) {
    throw new ToolInputError(`max_bytes must be a whole number from ${MIN_TOOL_BYTES} to ${MAX_TOOL_BYTES}, got ${JSON.stringify(v)}`, `leave it out for ${fallback}`);
  }
  return v as number;
}

/** `last_minutes` as [from, to] in microseconds; refused beside explicit timestamps. */
export function lastWindow(args: Record<string, unknown>, nowUs: number): [number, number] | undefined {
  const m = args['last_minutes'];
  if (m === undefined || m === null) return undefined;
  if (!Number.isInteger(m) || (m as number) < 1 || (m as number) > (lastMinutes['maximum'] as number)) {
    throw new ToolInputError(`last_minutes must be a whole number of minutes from 1 to ${lastMinutes['maximum']}, got ${JSON.stringify(m)}`, 'e.g. last_minutes: 60 for the last hour');
  }
  if (args['from_ts'] != null || args['to_ts'] != null) throw new ToolInputError('last_minutes cannot be combined with from_ts or to_ts', 'give either last_minutes or the timestamps');
  return [nowUs - (m as number) * MINUTE_US, nowUs];
}

/** The service's answer, or its error body; an unavailable endpoint or a dead server alike. */
const answer = (out: Outcome<unknown>): ToolAnswer => (out.ok ? { ok: true, value: out.body } : { ok: false, error: out.body });

/** `a, b and c`. */
const andList = (xs: readonly string[]) => (xs.length > 1 ? `${xs.slice(0, -1).join(', ')} and ${xs.at(-1)}` : xs.join(''));

const TABLE_NAMES = QUERYABLE_TABLES.map((t) => t.name).join(', ');

const listServices: ToolDef = {
  name: 'list_services',
  title: 'List services',
  description:
    'Every service that has reported telemetry, with first and last time seen (microseconds and ISO). Start here: the names are what get_anomalies, diagnose and SQL filters take.',
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  run: async (_args, api) => answer(await api.listServices()),
};

const getAnomalies: ToolDef = {
  name: 'get_anomalies',
  title: 'What changed: ranked worsening shifts',
  description:
    `Worsening regime shifts found by the scheduled changepoint detection (${andList(signalNames('operation'))} per operation; ${andList(signalNames('service'))} per service), ranked by relative magnitude, grouped by incident_id. ` +
    'Window: last_minutes, or from_ts/to_ts in microseconds; default the last hour. Each row carries drill_down_sql: run it verbatim with the query tool. ' +
    `The answer fits max_bytes (default ${ROWS_MAX_BYTES}): \`truncated: true\` means rows were left out (by the budget or the service's row cap), and next_sql fetches the next ones in the same order with the query tool.`,
  inputSchema: {
    type: 'object',
    properties: {
      service: param(API.listAnomalies, 'service'),
      from_ts: param(API.listAnomalies, 'from_ts'),
      to_ts: param(API.listAnomalies, 'to_ts'),
      last_minutes: lastMinutes,
      max_bytes: rowsMaxBytes,
    },
    additionalProperties: false,
  },
  async run(args, api, nowUs) {
    const service = optionalString(args, 'service', 'a service name from list_services');
    const budget = maxBytes(args, ROWS_MAX_BYTES);
    const last = lastWindow(args, nowUs);
    // The timestamps go as given (the service checks type and units), defaulted like `tds anomalies`.
    const w = last ? { from_ts: last[0], to_ts: last[1] } : anomalyWindow(args['from_ts'], args['to_ts'], nowUs);
    const out = await api.listAnomalies({ service, from_ts: w.from_ts as number, to_ts: w.to_ts as number });
    if (!out.ok) return answer(out);
    const q = { from: w.from_ts as number, to: w.to_ts as number, service };
    const value = rowsWithin(out.body.anomalies, budget, out.body.truncated, (anomalies) => ({ anomalies }), (offset) => anomalyPageSql(q, offset));
    return { ok: true, value };
  },
};

const diagnoseRequest = plainSchema(resolved(DiagnoseRequest)) as Schema & { properties: Record<string, Schema> };

const diagnose: ToolDef = {
  name: 'diagnose',
  title: 'Why: triage per service',
  description:
    'Diagnoses 1 to 10 services. By default (detail: findings) the compact view per service: findings ranked most important first, each with the service at fault (often a dependency, not the one asked about), operation, signal, before/after, score and drill_down_sql; ' +
    'the operations flagged anomalous with their drill_down_sql; coverage; events; and in `omitted` how many entries of every other part (span and log samples, operation summaries, log patterns, metrics, profiles, gen_ai) were left out, with drill_all_sql for spans and logs and `full_call`, the arguments that give the full block. ' +
    `The answer fits max_bytes (default ${DIAGNOSE_MAX_BYTES}, about ${approxTokens(DIAGNOSE_MAX_BYTES)} tokens): the lowest-ranked entries go first and each service's \`omitted\` counts them; \`budget\` says how many went. ` +
    'detail: full gives the whole block per service instead (up to 64 KiB each; max_bytes does not apply). ' +
    'Window: last_minutes, or from_ts (and optionally to_ts) in microseconds; default the last 15 minutes. baseline_from_ts/baseline_to_ts name a stretch known to be good (before a deploy, yesterday) as the baseline; without them the service picks undisturbed stretches. A service that could not be diagnosed is listed in `errors`. ' +
    'Follow a lead by passing its drill_down_sql verbatim to the query tool.',
  inputSchema: {
    ...diagnoseRequest,
    properties: {
      ...diagnoseRequest.properties,
      detail: { ...diagnoseRequest.properties['detail'], default: 'findings', description: '`findings` (the default here): the compact view per service; `full`: the whole diagnosis block per service' },
      max_bytes: { ...diagnoseRequest.properties['max_bytes'], default: DIAGNOSE_MAX_BYTES, description: `with detail findings: the most bytes of JSON the answer may take (default ${DIAGNOSE_MAX_BYTES}); not accepted with detail full` },
      last_minutes: lastMinutes,
    },
    additionalProperties: false,
    type: 'object',
  },
  async run(args, api, nowUs) {
    const body: Record<string, unknown> = {};
    // Only the endpoint's own fields go through; the service checks them and answers with a hint.
    for (const k of Object.keys(diagnoseRequest.properties)) if (args[k] !== undefined) body[k] = args[k];
    const last = lastWindow(args, nowUs);
    if (last) [body['from_ts'], body['to_ts']] = last;
    // An agent's default is the compact view within a budget; the full block is one argument away.
    body['detail'] ??= 'findings';
    if (body['detail'] === 'findings') body['max_bytes'] ??= DIAGNOSE_MAX_BYTES;
    return answer(await api.diagnose({ body: body as DiagnoseBody })); // the service checks the fields
  },
};

const query: ToolDef = {
  name: 'query',
  title: 'Run one read-only SQL SELECT',
  description:
    `Runs exactly one DuckDB SELECT over the telemetry and answers {rows, row_count, truncated, next_sql}. Tables: ${TABLE_NAMES} (bare, lake.<table> or main.<table>; columns in the resource tds://schema/tables); view svc_logs_resolved: svc_logs plus resolved_template_id, to group log records by event after template merges. ` +
    'Rules: no WITH/CTE (write a derived-table subquery: SELECT ... FROM (SELECT ...) AS t); one statement; allowlisted read-only functions only. ' +
    "`timestamp` columns are TIMESTAMP in UTC without time zone: bound every table's timestamp with a literal, e.g. WHERE timestamp >= TIMESTAMP '2025-01-01 00:00:00' AND timestamp < TIMESTAMP '2025-01-01 01:00:00' " +
    '(a bound built from now() is evaluated per row and reads everything). Every drill_down_sql and drill_all_sql from diagnose or get_anomalies already follows these rules: send it verbatim. ' +
    `The service refuses answers above its row cap (code ROW_CAP: aggregate or add LIMIT); this tool returns the first rows that fit max_rows (default ${DEFAULT_MAX_ROWS}) and max_bytes (default ${ROWS_MAX_BYTES}); ` +
    'when it cut, truncated is true and next_sql is the statement for the next rows (stable when the statement orders its rows completely): send it as it stands.',
  inputSchema: {
    type: 'object',
    properties: {
      sql: { type: 'string', description: 'one SELECT statement' },
      max_rows: { type: 'integer', minimum: 1, maximum: MAX_ROWS, description: `most rows to return (default ${DEFAULT_MAX_ROWS})` },
      max_bytes: rowsMaxBytes,
    },
    required: ['sql'],
    additionalProperties: false,
  },
  async run(args, api) {
    const sql = requiredString(args, 'sql', 'send one SELECT statement as `sql`, e.g. a drill_down_sql from diagnose');
    const max = args['max_rows'] ?? DEFAULT_MAX_ROWS;
    if (!Number.isInteger(max) || (max as number) < 1 || (max as number) > MAX_ROWS) {
      throw new ToolInputError(`max_rows must be a whole number from 1 to ${MAX_ROWS}, got ${JSON.stringify(max)}`, `leave it out for ${DEFAULT_MAX_ROWS}`);
    }
    const budget = maxBytes(args, ROWS_MAX_BYTES);
    const out = await api.runQuery({ body: sql });
    if (!out.ok) return answer(out);
    return { ok: true, value: boundRows(sql, out.body, max as number, budget) };
  },
};

/** The rows of a /v1/query answer: the first ones within `max` rows and `maxBytes`, saying whether any were left out and how to fetch them. */
export function boundRows(sql: string, rows: unknown, max: number, maxBytes: number) {
  const all = Array.isArray(rows) ? (rows as unknown[]) : [];
  const first = all.slice(0, max);
  return rowsWithin(first, maxBytes, all.length > max, (kept) => ({ rows: kept, row_count: all.length }), (offset) => pageSql(sql, offset));
}

const getTrace: ToolDef = {
  name: 'get_trace',
  title: 'One whole trace',
  description:
    'Every span of one trace with parent links, the root span, error count, services, critical path and the time each service took. ' +
    'Trace ids come from diagnose (exemplar_error_trace_id, span samples) or from query rows. Unknown id: error NOT_FOUND.',
  inputSchema: { type: 'object', properties: { trace_id: param(API.getTrace, 'trace_id') }, required: ['trace_id'], additionalProperties: false },
  async run(args, api) {
    const id = requiredString(args, 'trace_id', 'trace ids are 32 hex digits, e.g. exemplar_error_trace_id from diagnose');
    return answer(await api.getTrace({ trace_id: id }));
  },
};

const listAlerts: ToolDef = {
  name: 'list_alerts',
  title: 'Alert instances',
  description:
    'Instances of the built-in alert rules (one rule per signal: it fires when a worsening shift is recorded and resolves when the series returns to its earlier regime), newest first, with occurrence_count for re-firings.',
  inputSchema: { type: 'object', properties: { status: param(API.listAlerts, 'status') }, additionalProperties: false },
  async run(args, api) {
    const status = optionalString(args, 'status', 'firing or resolved, or leave it out');
    return answer(await api.listAlerts({ status: status as AlertStatus | undefined })); // the service checks the value
  },
};

export const TOOLS: readonly ToolDef[] = [listServices, getAnomalies, diagnose, query, getTrace, listAlerts];

/** No tool argument nests deeper than a list of names; deeper input is hostile (it overflows JSON.stringify). */
const MAX_ARGUMENT_DEPTH = 8;

/** Whether `value` nests arrays/objects deeper than `limit`; iterative, so hostile depth cannot overflow the stack. */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (!v || typeof v !== 'object') continue;
    if (depth >= limit) return true;
    for (const x of Object.values(v)) stack.push([x, depth + 1]);
  }
  return false;
}

/** Hostile nesting and misspelt arguments (service_name for service) are refused rather than ignored. */
function checkArguments(tool: ToolDef, args: Record<string, unknown>): void {
  if (nestedDeeperThan(args, MAX_ARGUMENT_DEPTH)) throw new ToolInputError(`the arguments of ${tool.name} nest deeper than ${MAX_ARGUMENT_DEPTH} levels`, 'every argument is a string, a number or a list of strings');
  const known = Object.keys((tool.inputSchema['properties'] ?? {}) as object);
  const unknown = Object.keys(args).find((k) => !known.includes(k));
  if (unknown !== undefined) {
    throw new ToolInputError(`${tool.name} has no argument ${JSON.stringify(unknown)}`, known.length ? `its arguments: ${known.join(', ')}` : 'it takes no arguments');
  }
}

/** Runs a tool; a refused input or any failure is a tool error with a code, a message and a hint, never a throw. */
export async function callTool(tool: ToolDef, args: Record<string, unknown>, api: ApiClient, nowUs: number): Promise<ToolAnswer> {
  try {
    checkArguments(tool, args);
    return await tool.run(args, api, nowUs);
  } catch (e) {
    if (e instanceof ToolInputError) return { ok: false, error: errorBody('BAD_REQUEST', e.message, e.hint) };
    return { ok: false, error: errorBody('INTERNAL', e instanceof Error ? e.message : String(e), 'this is a bug in the MCP server; the request may be retried') };
  }
}
