// The statement guard of `/v1/query`. DuckDB's own parser is the authority: the SQL goes to
// `json_serialize_sql(?)` as a bound parameter (never concatenated), and the guard walks the AST it
// returns. Accepted: exactly one SELECT (set operations, subqueries and VALUES included) without
// WITH, that references only the store's tables, calls only allowlisted functions and only the
// harmless table functions. Everything else is refused with a code and a hint.
//
// The walk is fail-closed: it visits every object and array of the AST, so no clause can be missed,
// and any expression class, table-reference type or query-node type it does not know is refused.
import type { DuckDBConnection } from '@duckdb/node-api';
import type { ErrorCode } from '../core/errors.js';
import { QUERYABLE_TABLES as QUERYABLE, QUERYABLE_VIEWS } from '../store/schema.js';
import { ALLOWED_FUNCTIONS, ALLOWED_TABLE_FUNCTIONS } from './allowlist.js';

export type GuardResult =
  | { ok: true; sql: string }
  | { ok: false; code: ErrorCode; message: string; hint: string };

/** Longest SQL accepted, in UTF-16 code units (about 100 KB of ASCII). */
export const MAX_SQL_LENGTH = 100_000;
/**
 * Most `/*` sequences accepted. DuckDB's parser takes time quadratic in the block comments when they
 * nest (tens of thousands of nested openers take DuckDB 1.5 many seconds), and it cannot be
 * interrupted while it parses. Counted anywhere in the text, string literals included: an
 * overestimate that only refuses statements no one writes.
 */
export const MAX_BLOCK_COMMENTS = 256;
/** Deepest nesting of the parsed AST (JSON objects and arrays) accepted. A legitimate drill-down is < 100. */
export const MAX_AST_DEPTH = 600;

/** Lower-cased names of every table a query may read. */
export const QUERYABLE_TABLES: ReadonlySet<string> = new Set([...QUERYABLE, ...QUERYABLE_VIEWS].map((t) => t.name.toLowerCase()));

const TABLE_LIST = [...QUERYABLE_TABLES].join(', ');

const HINTS = {
  notSelect: 'Send exactly one read-only SELECT statement (FROM-first and VALUES are fine). Settings, files, extensions, catalogs and writes are not available through /v1/query.',
  cte: 'WITH / CTE clauses are not supported: rewrite each CTE as a derived-table subquery, e.g. SELECT ... FROM (SELECT ... FROM svc_spans WHERE ...) AS t.',
  multiple: 'Send one statement per request (a single trailing semicolon is fine).',
  table: `Only these tables can be read, bare or qualified as lake.<table>, main.<table> or lake.main.<table>: ${TABLE_LIST}; plus derived-table subqueries.`,
  tableFunction: `Only these table functions may appear in FROM: ${[...ALLOWED_TABLE_FUNCTIONS].join(', ')}. File and network readers, catalog and system functions are blocked.`,
  func: 'Only DuckDB read-only analytic functions are allowed (arithmetic, string, regex, date/time, JSON extraction, list and lambda, struct/map, aggregates, quantiles, window functions). System, setting, catalog, sequence, variable and file functions are blocked.',
  large: `Keep the statement under ${MAX_SQL_LENGTH} characters, with few comments, and reasonably shallow; aggregate in SQL rather than inlining long literal lists.`,
  syntax: 'Check the statement against DuckDB SQL syntax; the message gives the parser error and its position.',
  construct: 'Rewrite the statement without this construct.',
} as const;

type Refusal = Extract<GuardResult, { ok: false }>;

class Refused extends Error {
  constructor(readonly refusal: Refusal) {
    super(refusal.message);
  }
}

function refuse(code: ErrorCode, message: string, hint: string): never {
  throw new Refused({ ok: false, code, message, hint });
}

/**
 * Checks that `sql` is one allowed SELECT. `conn` is any connection on the store's instance; only
 * the parser runs (`json_serialize_sql` parses and never binds or executes the statement).
 */
export async function checkSelect(conn: DuckDBConnection, sql: string): Promise<GuardResult> {
  try {
    return { ok: true, sql: await checkOrThrow(conn, sql) };
  } catch (err) {
    if (err instanceof Refused) return err.refusal;
    throw err;
  }
}

async function checkOrThrow(conn: DuckDBConnection, sql: string): Promise<string> {
  if (typeof sql !== 'string') refuse('NOT_SELECT', 'The query must be a SQL string.', HINTS.notSelect);
  if (sql.length > MAX_SQL_LENGTH) {
    refuse('SQL_TOO_LARGE', `The statement is ${sql.length} characters long; the limit is ${MAX_SQL_LENGTH}.`, HINTS.large);
  }
  const comments = countOf(sql, '/*');
  if (comments > MAX_BLOCK_COMMENTS) {
    refuse('SQL_TOO_LARGE', `The statement has ${comments} block-comment openers (/*); the limit is ${MAX_BLOCK_COMMENTS}.`, HINTS.large);
  }
  if (sql.includes('\u0000')) refuse('NOT_SELECT', 'The statement contains a NUL character.', HINTS.notSelect);
  if (sql.trim() === '') refuse('NOT_SELECT', 'The query is empty.', HINTS.notSelect);

  const reader = await conn.runAndReadAll('SELECT json_serialize_sql(?::VARCHAR) AS ast', [sql]);
  const text = reader.getRows()[0]?.[0];
  if (typeof text !== 'string') refuse('SQL_ERROR', 'The statement could not be parsed.', HINTS.syntax);
  const ast = parseJson(text);

  if (ast.error === true) {
    const type = String(ast.error_type ?? '');
    if (type === 'parser') {
      const pos = ast.position !== undefined ? ` at position ${String(ast.position)}` : '';
      refuse('SQL_ERROR', `Syntax error${pos}: ${String(ast.error_message ?? 'cannot parse the statement')}.`, HINTS.syntax);
    }
    // json_serialize_sql refuses to serialize anything but SELECT statements.
    const kw = leadingKeyword(sql);
    refuse('NOT_SELECT', `Only SELECT statements are allowed${kw ? `; this is ${kw}` : ''}.`, HINTS.notSelect);
  }
  const statements = ast.statements;
  if (!Array.isArray(statements) || statements.length === 0) refuse('NOT_SELECT', 'The query contains no statement.', HINTS.notSelect);
  if (statements.length > 1) {
    refuse('MULTIPLE_STATEMENTS', `The query contains ${statements.length} statements; exactly one SELECT is allowed.`, HINTS.multiple);
  }
  const stmt = statements[0] as Record<string, unknown>;
  if (!isObject(stmt) || !isObject(stmt.node)) refuse('NOT_SELECT', 'The statement is not a SELECT.', HINTS.notSelect);
  const named = stmt.named_param_map;
  if (Array.isArray(named) && named.length > 0) refuse('SQL_NOT_ALLOWED', 'Prepared-statement parameters are not supported.', 'Inline the values as literals.');
  new Walker().visit(stmt.node, 0);
  return sql;
}

function countOf(text: string, needle: string): number {
  let n = 0;
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) n++;
  return n;
}

function parseJson(text: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text) as unknown;
    if (isObject(v)) return v;
  } catch {
    // fall through: an AST too deep for JSON.parse is refused like any other overly deep input
  }
  refuse('SQL_TOO_LARGE', 'The statement is too deeply nested to be checked.', HINTS.large);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Expression classes of DuckDB's ParsedExpression that a SELECT may contain. */
const EXPRESSION_CLASSES = new Set([
  'BETWEEN', 'CASE', 'CAST', 'COLLATE', 'COLUMN_REF', 'COMPARISON', 'CONJUNCTION', 'CONSTANT', 'FUNCTION',
  'LAMBDA', 'LAMBDA_REF', 'OPERATOR', 'POSITIONAL_REFERENCE', 'STAR', 'SUBQUERY', 'WINDOW',
]);
/** TableRef types a SELECT may contain (SHOW_REF is DESCRIBE/SHOW/SUMMARIZE; COLUMN_DATA and DELIM_GET are internal). */
const TABLE_REF_TYPES = new Set(['BASE_TABLE', 'JOIN', 'SUBQUERY', 'TABLE_FUNCTION', 'EMPTY', 'EXPRESSION_LIST', 'PIVOT']);
/** QueryNode types a SELECT may contain (CTE_NODE and RECURSIVE_CTE_NODE are WITH). */
const QUERY_NODE_TYPES = new Set(['SELECT_NODE', 'SET_OPERATION_NODE']);
const REFUSED_TABLE_REFS: Record<string, string> = {
  SHOW_REF: 'DESCRIBE, SHOW and SUMMARIZE are not allowed.',
  COLUMN_DATA: 'This table reference is not allowed.',
  DELIM_GET: 'This table reference is not allowed.',
};

class Walker {
  visit(node: unknown, depth: number): void {
    if (depth > MAX_AST_DEPTH) refuse('SQL_TOO_LARGE', `The statement nests deeper than ${MAX_AST_DEPTH} levels.`, HINTS.large);
    if (Array.isArray(node)) {
      for (const item of node) this.visit(item, depth + 1);
      return;
    }
    if (!isObject(node)) return;

    let skipKey: string | undefined;
    if (typeof node.class === 'string') {
      this.expression(node);
    } else if (typeof node.type === 'string' && (node.type.endsWith('_NODE') || 'modifiers' in node)) {
      this.queryNode(node);
    } else if (typeof node.type === 'string' && node.type.endsWith('_TYPE_INFO')) {
      // A type's details (DECIMAL width, STRUCT children...): nothing to check, walked below.
    } else if (
      typeof node.type === 'string' &&
      ('sample' in node || 'query_location' in node || 'alias' in node || node.type in REFUSED_TABLE_REFS || TABLE_REF_TYPES.has(node.type))
    ) {
      skipKey = this.tableRef(node, depth);
    }
    // Name-bearing keys are checked wherever they appear, whatever the node kind.
    if ('function_name' in node && typeof node.class !== 'string') this.functionName(node, false);
    if ('table_name' in node && node.type !== 'BASE_TABLE') refuse('TABLE_NOT_ALLOWED', 'This table reference is not allowed.', HINTS.table);
    if ('cte_map' in node) this.noCte(node.cte_map);

    for (const key of Object.keys(node)) {
      if (key === skipKey) continue;
      this.visit(node[key], depth + 1);
    }
  }

  private expression(node: Record<string, unknown>): void {
    const cls = node.class as string;
    if (!EXPRESSION_CLASSES.has(cls)) {
      if (cls === 'PARAMETER') refuse('SQL_NOT_ALLOWED', 'Prepared-statement parameters ($1, ?) are not supported.', 'Inline the values as literals.');
      refuse('SQL_NOT_ALLOWED', `Expressions of kind ${cls} are not allowed.`, HINTS.construct);
    }
    if (cls === 'FUNCTION' || cls === 'WINDOW' || 'function_name' in node) this.functionName(node, false);
    if (node.export_state === true) refuse('SQL_NOT_ALLOWED', 'EXPORT_STATE is not allowed.', HINTS.construct);
  }

  private functionName(node: Record<string, unknown>, table: boolean): void {
    const raw = node.function_name;
    const name = typeof raw === 'string' ? raw.toLowerCase() : '';
    const schema = typeof node.schema === 'string' ? node.schema : '';
    const catalog = typeof node.catalog === 'string' ? node.catalog : '';
    // The parser itself qualifies some calls it generates with schema `main` (list_value, struct_pack,
    // map, row, date_part from EXTRACT); any other qualifier is refused.
    if ((schema !== '' && schema !== 'main') || catalog !== '') {
      refuse('FUNCTION_NOT_ALLOWED', `Schema-qualified function ${[catalog, schema, name].filter(Boolean).join('.')}() is not allowed.`, 'Call functions by their bare name.');
    }
    if (table) {
      if (!ALLOWED_TABLE_FUNCTIONS.has(name)) refuse('FUNCTION_NOT_ALLOWED', `Table function ${name}() is not allowed.`, HINTS.tableFunction);
    } else if (!ALLOWED_FUNCTIONS.has(name)) {
      refuse('FUNCTION_NOT_ALLOWED', `Function ${name}() is not allowed.`, HINTS.func);
    }
  }

  private queryNode(node: Record<string, unknown>): void {
    const type = node.type as string;
    if (type === 'CTE_NODE' || type === 'RECURSIVE_CTE_NODE') refuse('CTE_NOT_ALLOWED', 'WITH / CTE clauses are not allowed.', HINTS.cte);
    if (!QUERY_NODE_TYPES.has(type)) refuse('SQL_NOT_ALLOWED', `Query node ${type} is not allowed.`, HINTS.construct);
  }

  private noCte(cteMap: unknown): void {
    const map = isObject(cteMap) ? cteMap.map : undefined;
    if (map !== undefined && !(Array.isArray(map) && map.length === 0)) refuse('CTE_NOT_ALLOWED', 'WITH / CTE clauses are not allowed.', HINTS.cte);
  }

  /** Checks a table reference; returns a key whose subtree the generic walk must skip (already handled). */
  private tableRef(node: Record<string, unknown>, depth: number): string | undefined {
    const type = node.type as string;
    if (type in REFUSED_TABLE_REFS) refuse('NOT_SELECT', REFUSED_TABLE_REFS[type]!, HINTS.notSelect);
    if (!TABLE_REF_TYPES.has(type)) refuse('SQL_NOT_ALLOWED', `Table reference ${type} is not allowed.`, HINTS.construct);
    if (type === 'BASE_TABLE') {
      this.baseTable(node);
      return undefined;
    }
    if (type === 'TABLE_FUNCTION') {
      const fn = node.function;
      if (!isObject(fn) || fn.class !== 'FUNCTION') refuse('FUNCTION_NOT_ALLOWED', 'This table function is not allowed.', HINTS.tableFunction);
      this.functionName(fn, true);
      // Walk the call's arguments (and any other field) as ordinary expressions, but not the call itself,
      // whose name was checked against the table-function list rather than the scalar one.
      for (const key of Object.keys(fn)) this.visit(fn[key], depth + 2);
      return 'function';
    }
    return undefined;
  }

  private baseTable(node: Record<string, unknown>): void {
    const table = String(node.table_name ?? '').toLowerCase();
    const schema = String(node.schema_name ?? '').toLowerCase();
    const catalog = String(node.catalog_name ?? '').toLowerCase();
    const shown = [catalog, schema, table].filter(Boolean).join('.');
    // Two-part names parse as schema.table; DuckDB resolves `lake.x` as catalog lake, `main.x` as schema main.
    const qualifierOk =
      (catalog === '' && (schema === '' || schema === 'main' || schema === 'lake')) || (catalog === 'lake' && schema === 'main');
    if (!qualifierOk || !QUERYABLE_TABLES.has(table)) {
      const fileLike = /[/\\.:]/.test(table);
      refuse('TABLE_NOT_ALLOWED', fileLike ? `Reading files (${shown}) is not allowed.` : `Table ${shown} is not allowed.`, HINTS.table);
    }
    if (node.at_clause !== null && node.at_clause !== undefined) refuse('SQL_NOT_ALLOWED', 'Time travel (AT ...) is not supported.', HINTS.construct);
  }
}

/** The first keyword of a statement, after comments and parentheses; for messages only, never for decisions. */
export function leadingKeyword(sql: string): string | undefined {
  let s = sql;
  for (;;) {
    const before = s;
    s = s.replace(/^[\s(]+/, '');
    if (s.startsWith('--')) s = s.replace(/^--[^\n]*(\n|$)/, '');
    else if (s.startsWith('/*')) {
      const end = s.indexOf('*/');
      s = end < 0 ? '' : s.slice(end + 2);
    }
    if (s === before) break;
  }
  const m = /^[A-Za-z_]+/.exec(s);
  return m ? m[0].toUpperCase() : undefined;
}
