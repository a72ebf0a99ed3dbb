// The CLI's client-side guard for `tds query`: refuse, before sending, a statement that would scan a
// table's `timestamp` column without a literal bound (DuckDB can then skip whole row groups by their
// min/max; a bound built from now() is evaluated per row and reads everything).
//
// The rule, per SELECT (top level, UNION branches, derived tables, lateral joins, scalar/IN/EXISTS
// subqueries — every SELECT anywhere in the tree is checked on its own):
//   every reference in its FROM/JOIN list to a table that has a `timestamp` column (the tables of
//   src/store/schema.ts, bare or qualified as lake./main./lake.main.) must be bounded by that same
//   SELECT's WHERE or by a JOIN ... ON condition of that SELECT. A bound on an outer query does not
//   count for a table read in a subquery.
//   A condition bounds the table when it implies a comparison `timestamp <op> literal` (op one of =,
//   <, <=, >, >=, BETWEEN literal AND literal, IN (literals); either side) on that table's column:
//   AND needs one side to bound, OR needs both sides to bound, NOT/other functions never bound.
//   The column is `timestamp` (quoted or not) unqualified, or qualified by the table's alias or name.
//   A literal is a string, number, TIMESTAMP/DATE '...' literal, INTERVAL literal, a CAST/:: of a
//   literal, +/- arithmetic of literals, or make_timestamp()/epoch_ms() of literals (DuckDB folds all
//   of these to a TIMESTAMP constant and pushes the filter into the scan). now(), current_timestamp,
//   current_date, today() and anything else evaluated at run time never count, nor does a
//   time-zone-aware value (a TIMESTAMPTZ cast, to_timestamp()): DuckDB then casts the column per row.
// node-sql-parser has no DuckDB dialect: it parses with the postgresql grammar after rewriting a few
// DuckDB-only clauses that cannot affect FROM/WHERE (GROUP BY ALL, ORDER BY ALL, * EXCLUDE/REPLACE
// (...), QUALIFY, [list] literals). When it still cannot parse, the result is `unparseable` and the
// caller refuses with UNCHECKABLE unless --full-scan is given.
import pg from 'node-sql-parser/build/postgresql.js';
import { QUERYABLE_TABLES, type Table } from '../store/schema.js';

const { Parser } = pg;

export interface UnboundedRef {
  /** The table as written, e.g. `lake.svc_spans`. */
  table: string;
  alias: string | null;
  /** True when the only bound found was run-time (now()-based), which reads every file. */
  now_based: boolean;
  /** True when a bound compared with a time-zone-aware value (TIMESTAMPTZ, to_timestamp()): the column is then cast per row. */
  tz_aware: boolean;
}

export type FullScanCheck =
  | { status: 'ok'; tables_checked: number }
  | { status: 'unbounded'; unbounded: UnboundedRef[] }
  | { status: 'unparseable'; error: string };

/** Names (lower case) of the tables that have a `timestamp` column. */
export function timestampTables(tables: readonly Table[] = QUERYABLE_TABLES): Set<string> {
  return new Set(tables.filter((t) => t.columns.some((c) => c.name === 'timestamp')).map((t) => t.name.toLowerCase()));
}

type AstNode = Record<string, unknown>;
const isObj = (x: unknown): x is AstNode => typeof x === 'object' && x !== null && !Array.isArray(x);

// ---------------------------------------------------------------------------------------------
// DuckDB-only syntax rewrites, applied on a masked copy (string/identifier/comment contents blanked)
// so that nothing inside a literal is ever touched.

function mask(sql: string): string {
  const out = sql.split('');
  let i = 0;
  const n = sql.length;
  const blank = (a: number, b: number): void => {
    for (let k = a; k < b; k++) if (out[k] !== '\n') out[k] = ' ';
  };
  while (i < n) {
    const ch = sql[i]!;
    if (ch === "'" || ch === '"') {
      let j = i + 1;
      while (j < n) {
        if (sql[j] === ch) {
          if (sql[j + 1] === ch) { j += 2; continue; }
          break;
        }
        j++;
      }
      blank(i + 1, j);
      i = j + 1;
    } else if (ch === '-' && sql[i + 1] === '-') {
      let j = sql.indexOf('\n', i);
      if (j < 0) j = n;
      blank(i, j);
      i = j;
    } else if (ch === '/' && sql[i + 1] === '*') {
      let j = sql.indexOf('*/', i + 2);
      j = j < 0 ? n : j + 2;
      blank(i, j);
      i = j;
    } else if (ch === '$') {
      const m = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i));
      if (!m) { i++; continue; }
      const end = sql.indexOf(m[0], i + m[0].length);
      const j = end < 0 ? n : end + m[0].length;
      blank(i + m[0].length, end < 0 ? n : end);
      i = j;
    } else i++;
  }
  return out.join('');
}

interface Edit { from: number; to: number; text: string }

function applyEdits(sql: string, edits: Edit[]): string {
  edits.sort((a, b) => b.from - a.from);
  let s = sql;
  let limit = Infinity;
  for (const e of edits) {
    if (e.to > limit) continue; // overlapping edit: keep the later-starting one
    s = s.slice(0, e.from) + e.text + s.slice(e.to);
    limit = e.from;
  }
  return s;
}

function matchingParen(m: string, open: number): number {
  let depth = 0;
  for (let i = open; i < m.length; i++) {
    if (m[i] === '(') depth++;
    else if (m[i] === ')' && --depth === 0) return i;
  }
  return -1;
}

const LIST_PRECEDERS = new Set(['SELECT', 'WHERE', 'AND', 'OR', 'NOT', 'IN', 'THEN', 'ELSE', 'WHEN', 'ON', 'BY', 'HAVING', 'IS', 'LIKE', 'DISTINCT', 'ALL', 'ANY', 'CASE', 'BETWEEN', 'VALUES']);

/** Rewrites DuckDB-only clauses that cannot change which tables are read or how they are filtered. */
export function rewriteDuckDbIsms(sql: string): string {
  const m = mask(sql);
  const edits: Edit[] = [];
  for (const r of m.matchAll(/\b(GROUP|ORDER)(\s+)BY(\s+)ALL\b/gi)) {
    edits.push({ from: r.index!, to: r.index! + r[0].length, text: `${r[1]} BY 1` });
  }
  for (const r of m.matchAll(/\*\s*(EXCLUDE|REPLACE)\s*\(/gi)) {
    const open = r.index! + r[0].length - 1;
    const close = matchingParen(m, open);
    if (close > 0) edits.push({ from: r.index!, to: close + 1, text: '*' });
  }
  for (const r of m.matchAll(/\*\s*EXCLUDE\s+([A-Za-z_][A-Za-z0-9_]*|"\s*")/gi)) {
    edits.push({ from: r.index!, to: r.index! + r[0].length, text: '*' });
  }
  if (!/\bHAVING\b/i.test(m)) {
    for (const r of m.matchAll(/\bQUALIFY\b/gi)) edits.push({ from: r.index!, to: r.index! + r[0].length, text: 'HAVING' });
  }
  // A `[` that starts a value (not an index after an identifier, `)`, `]` or a quote) is a list literal.
  for (const r of m.matchAll(/\[/g)) {
    const before = m.slice(0, r.index!).trimEnd();
    const prev = before[before.length - 1];
    const word = /([A-Za-z_][A-Za-z0-9_]*)$/.exec(before)?.[1]?.toUpperCase();
    const valueStart = prev === undefined || !/[A-Za-z0-9_)\]"'$]/.test(prev) || (word !== undefined && LIST_PRECEDERS.has(word));
    if (valueStart) edits.push({ from: r.index!, to: r.index!, text: 'ARRAY' });
  }
  return edits.length ? applyEdits(sql, edits) : sql;
}

// ---------------------------------------------------------------------------------------------

const parser = new Parser();

function parse(sql: string): unknown {
  return parser.astify(sql, { database: 'postgresql' });
}

const LITERAL_TYPES = new Set(['single_quote_string', 'string', 'natural_string', 'number', 'timestamp', 'date', 'datetime', 'time', 'bigint']);
// Conversions that DuckDB folds to a TIMESTAMP constant (checked with EXPLAIN: the filter is pushed
// into the scan). to_timestamp() returns TIMESTAMPTZ and forces a per-row cast of the column: not here.
const PURE_FUNCTIONS = new Set(['make_timestamp', 'epoch_ms']);
const RUNTIME_FUNCTIONS = new Set(['now', 'current_timestamp', 'current_date', 'current_time', 'get_current_timestamp', 'today', 'localtimestamp', 'transaction_timestamp', 'statement_timestamp', 'get_current_time']);

function functionName(e: AstNode): string {
  const n = e.name;
  if (typeof n === 'string') return n.toLowerCase();
  if (isObj(n) && Array.isArray(n.name)) {
    const parts = (n.name as unknown[]).map((p) => (isObj(p) ? String(p.value) : String(p)));
    return parts[parts.length - 1]!.toLowerCase();
  }
  return '';
}

function argList(e: AstNode): unknown[] {
  const a = e.args;
  if (isObj(a) && Array.isArray(a.value)) return a.value;
  if (Array.isArray(a)) return a;
  return [];
}

function isLiteral(e: unknown): boolean {
  if (!isObj(e)) return false;
  const t = e.type as string;
  if (LITERAL_TYPES.has(t)) return true;
  if (t === 'interval') return isLiteral(e.expr);
  if (t === 'cast') return !isTzCast(e) && isLiteral(e.expr);
  if (t === 'unary_expr') return (e.operator === '-' || e.operator === '+') && isLiteral(e.expr);
  if (t === 'binary_expr') return (e.operator === '+' || e.operator === '-') && isLiteral(e.left) && isLiteral(e.right);
  if (t === 'function') return PURE_FUNCTIONS.has(functionName(e)) && argList(e).every(isLiteral);
  return false;
}

/** A cast to TIMESTAMPTZ / TIMESTAMP WITH TIME ZONE: comparing the column with it casts the column per row. */
function isTzCast(e: AstNode): boolean {
  const targets = Array.isArray(e.target) ? e.target : [e.target];
  return targets.some((t) => {
    if (!isObj(t)) return false;
    const dt = String(t.dataType ?? '').toUpperCase();
    const suffix = Array.isArray(t.suffix) ? t.suffix.map(String).join(' ').toUpperCase() : '';
    return dt === 'TIMESTAMPTZ' || (dt.startsWith('TIMESTAMP') && suffix.includes('WITH TIME ZONE'));
  });
}

function mentionsTimeZone(e: unknown): boolean {
  const stack = [e];
  while (stack.length) {
    const x = stack.pop();
    if (Array.isArray(x)) { stack.push(...x); continue; }
    if (!isObj(x)) continue;
    if (x.type === 'cast' && isTzCast(x)) return true;
    if (x.type === 'function' && functionName(x) === 'to_timestamp') return true;
    for (const v of Object.values(x)) if (typeof v === 'object' && v !== null) stack.push(v);
  }
  return false;
}

/** True when the expression involves a run-time clock (now(), current_timestamp...). */
function mentionsRuntimeClock(e: unknown): boolean {
  const stack = [e];
  while (stack.length) {
    const x = stack.pop();
    if (Array.isArray(x)) { stack.push(...x); continue; }
    if (!isObj(x)) continue;
    if (x.type === 'function' && RUNTIME_FUNCTIONS.has(functionName(x))) return true;
    for (const v of Object.values(x)) if (typeof v === 'object' && v !== null) stack.push(v);
  }
  return false;
}

function columnName(e: AstNode): string | null {
  const c = e.column;
  if (typeof c === 'string') return c;
  if (isObj(c) && isObj(c.expr) && typeof c.expr.value === 'string') return c.expr.value;
  return null;
}

/** Is `e` the `timestamp` column of the table known by one of `qualifiers`? */
function isTimestampOf(e: unknown, qualifiers: readonly string[]): boolean {
  if (!isObj(e) || e.type !== 'column_ref') return false;
  const name = columnName(e);
  if (name === null || name.toLowerCase() !== 'timestamp') return false;
  const t = e.table;
  if (t === null || t === undefined || t === '') return true;
  return typeof t === 'string' && qualifiers.includes(t.toLowerCase());
}

const RANGE_OPS = new Set(['=', '<', '<=', '>', '>=']);

interface BoundResult { bounded: boolean; nowBased: boolean; tzAware: boolean }
const NO: BoundResult = { bounded: false, nowBased: false, tzAware: false };

/** Does the condition imply a literal bound on the table's timestamp? (See the rule at the top.) */
function bounds(cond: unknown, q: readonly string[]): BoundResult {
  if (!isObj(cond) || cond.type !== 'binary_expr') return NO;
  const op = String(cond.operator).toUpperCase();
  if (op === 'AND') {
    const l = bounds(cond.left, q);
    if (l.bounded) return l;
    const r = bounds(cond.right, q);
    return r.bounded ? r : { bounded: false, nowBased: l.nowBased || r.nowBased, tzAware: l.tzAware || r.tzAware };
  }
  if (op === 'OR') {
    const l = bounds(cond.left, q);
    const r = bounds(cond.right, q);
    return { bounded: l.bounded && r.bounded, nowBased: l.nowBased || r.nowBased, tzAware: l.tzAware || r.tzAware };
  }
  let other: unknown[] | null = null;
  if (RANGE_OPS.has(op)) {
    if (isTimestampOf(cond.left, q)) other = [cond.right];
    else if (isTimestampOf(cond.right, q)) other = [cond.left];
  } else if ((op === 'BETWEEN' || op === 'IN') && isTimestampOf(cond.left, q)) {
    const r = cond.right;
    other = isObj(r) && Array.isArray(r.value) ? r.value : [r];
  }
  if (other === null || other.length === 0) return NO;
  if (other.every(isLiteral)) return { bounded: true, nowBased: false, tzAware: false };
  return { bounded: false, nowBased: other.some(mentionsRuntimeClock), tzAware: other.some(mentionsTimeZone) };
}

function tableName(ref: AstNode): string {
  return [ref.db, ref.schema, ref.table].filter((p) => typeof p === 'string' && p !== '').join('.');
}

/** Checks the FROM list of one SELECT node; returns its unbounded timestamp-table references. */
function checkSelect(sel: AstNode, tsTables: ReadonlySet<string>, counter: { n: number }): UnboundedRef[] {
  const from = Array.isArray(sel.from) ? (sel.from as unknown[]).filter(isObj) : [];
  const conditions: unknown[] = [sel.where];
  for (const f of from) if (f.on) conditions.push(f.on);
  const out: UnboundedRef[] = [];
  for (const f of from) {
    if (typeof f.table !== 'string') continue;
    const bare = f.table.toLowerCase();
    if (!tsTables.has(bare)) continue;
    counter.n++;
    const alias = typeof f.as === 'string' && f.as !== '' ? f.as : null;
    const qualifiers = alias ? [alias.toLowerCase(), bare] : [bare];
    let nowBased = false;
    let tzAware = false;
    let ok = false;
    for (const c of conditions) {
      const r = bounds(c, qualifiers);
      if (r.bounded) { ok = true; break; }
      nowBased ||= r.nowBased;
      tzAware ||= r.tzAware;
    }
    if (!ok) out.push({ table: tableName(f), alias, now_based: nowBased, tz_aware: tzAware });
  }
  return out;
}

/** Checks every SELECT in the statement(s). */
export function checkFullScan(sql: string, tables: readonly Table[] = QUERYABLE_TABLES): FullScanCheck {
  let ast: unknown;
  try {
    ast = parse(sql);
  } catch (first) {
    const rewritten = rewriteDuckDbIsms(sql);
    try {
      if (rewritten === sql) throw first;
      ast = parse(rewritten);
    } catch {
      const msg = first instanceof Error ? first.message : String(first);
      return { status: 'unparseable', error: msg.length > 300 ? msg.slice(0, 300) + '…' : msg };
    }
  }
  const tsTables = timestampTables(tables);
  const counter = { n: 0 };
  const unbounded: UnboundedRef[] = [];
  const stack: unknown[] = [ast];
  const seen = new Set<unknown>();
  while (stack.length) {
    const x = stack.pop();
    if (typeof x !== 'object' || x === null || seen.has(x)) continue;
    seen.add(x);
    if (Array.isArray(x)) { stack.push(...x); continue; }
    const node = x as AstNode;
    if (node.type === 'select') unbounded.push(...checkSelect(node, tsTables, counter));
    for (const [k, v] of Object.entries(node)) {
      if (k === 'tableList' || k === 'columnList') continue;
      if (typeof v === 'object' && v !== null) stack.push(v);
    }
  }
  return unbounded.length ? { status: 'unbounded', unbounded } : { status: 'ok', tables_checked: counter.n };
}
