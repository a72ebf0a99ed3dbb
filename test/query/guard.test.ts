// The statement guard alone: every hostile statement refused with the right code and a hint, every
// valid analytic statement accepted. The end-to-end behaviour (answers, nothing changed) is in
// query.test.ts.
import type { DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSelect, leadingKeyword, MAX_BLOCK_COMMENTS, MAX_SQL_LENGTH } from '../../src/query/guard.js';
import { ALLOWED_FUNCTIONS, ALLOWED_TABLE_FUNCTIONS, PARSER_ONLY_NAMES } from '../../src/query/allowlist.js';
import { HOSTILE, VALID } from './corpus.js';
import { openFixture, type Fixture } from './fixture.js';

let fx: Fixture;
let conn: DuckDBConnection;

beforeAll(async () => {
  fx = await openFixture({ rows: false });
  conn = await fx.instance.connect();
});
afterAll(() => {
  conn.closeSync();
  fx.cleanup();
});

const fill = (sql: string): string => sql.replaceAll('{SPOOL}', '/tmp/spool').replaceAll('{OUT}', '/tmp/out.csv');

describe('hostile corpus', () => {
  it('has at least 60 statements', () => {
    expect(HOSTILE.length).toBeGreaterThanOrEqual(60);
  });
  it.each(HOSTILE.map((h) => [h.why, h] as const))('refuses: %s', async (_why, h) => {
    const verdict = await checkSelect(conn, fill(h.sql));
    expect(verdict.ok).toBe(false);
    if (verdict.ok) return;
    if (h.code) expect(verdict.code).toBe(h.code);
    expect(verdict.message.length).toBeGreaterThan(0);
    expect(verdict.hint.length).toBeGreaterThan(0);
  });
});

describe('valid corpus', () => {
  it('has at least 30 statements', () => {
    expect(VALID.length).toBeGreaterThanOrEqual(30);
  });
  it.each(VALID.map((v) => [v.why, v] as const))('accepts: %s', async (_why, v) => {
    const verdict = await checkSelect(conn, v.sql);
    expect(verdict).toEqual({ ok: true, sql: v.sql });
  });
});

describe('refusal details', () => {
  it('tells a CTE to become a derived table', async () => {
    const v = await checkSelect(conn, 'WITH x AS (SELECT 1) SELECT * FROM x');
    expect(v).toMatchObject({ ok: false, code: 'CTE_NOT_ALLOWED' });
    if (!v.ok) expect(v.hint).toMatch(/derived-table subquery/);
  });
  it('names the statement kind it refuses', async () => {
    const v = await checkSelect(conn, "/* hi */ COPY svc_spans TO 'x'");
    expect(v).toMatchObject({ ok: false, code: 'NOT_SELECT' });
    if (!v.ok) expect(v.message).toMatch(/COPY/);
    const w = await checkSelect(conn, "ATTACH 'x.duckdb'");
    if (!w.ok) expect(w.message).toMatch(/ATTACH/);
  });
  it('names the function and the table it refuses', async () => {
    const f = await checkSelect(conn, 'SELECT current_setting(\'threads\')');
    if (!f.ok) expect(f.message).toMatch(/current_setting/);
    const t = await checkSelect(conn, 'SELECT * FROM duckdb_settings');
    if (!t.ok) {
      expect(t.message).toMatch(/duckdb_settings/);
      expect(t.hint).toMatch(/svc_spans/);
    }
  });
  it('reports a syntax error with its position', async () => {
    const v = await checkSelect(conn, 'SELEC 1');
    expect(v).toMatchObject({ ok: false, code: 'SQL_ERROR' });
    if (!v.ok) expect(v.message).toMatch(/position/);
  });
  it('caps the length just above the limit and accepts just below', async () => {
    const pad = (n: number): string => 'SELECT 1 AS x ' + ' '.repeat(n - 14);
    expect((await checkSelect(conn, pad(MAX_SQL_LENGTH))).ok).toBe(true);
    expect(await checkSelect(conn, pad(MAX_SQL_LENGTH + 1))).toMatchObject({ ok: false, code: 'SQL_TOO_LARGE' });
  });
  it('refuses many block comments before the parser, whose time is quadratic in nested ones', async () => {
    // Found by fuzzing: 30,000 `/*` kept a DuckDB thread parsing for ~12 s, past any interrupt.
    const comments = (n: number): string => '/* c */ '.repeat(n) + 'SELECT 1';
    expect((await checkSelect(conn, comments(MAX_BLOCK_COMMENTS))).ok).toBe(true);
    expect(await checkSelect(conn, comments(MAX_BLOCK_COMMENTS + 1))).toMatchObject({ ok: false, code: 'SQL_TOO_LARGE' });
    expect(await checkSelect(conn, '/*/**/*/'.repeat(6000) + 'SELECT 1')).toMatchObject({ ok: false, code: 'SQL_TOO_LARGE' });
    expect(await checkSelect(conn, '/*'.repeat(20_000))).toMatchObject({ ok: false, code: 'SQL_TOO_LARGE' });
  });
  it('finds the leading keyword behind comments and parentheses', () => {
    expect(leadingKeyword('-- a\n/* b */ ((copy x')).toBe('COPY');
    expect(leadingKeyword('   ')).toBeUndefined();
  });
});

describe('allowlist', () => {
  it('names only functions DuckDB has (or operators its parser emits)', async () => {
    const r = await conn.runAndReadAll("SELECT DISTINCT lower(function_name), function_type FROM duckdb_functions()");
    const known = new Map<string, Set<string>>();
    for (const [name, type] of r.getRowsJS()) {
      const set = known.get(String(name)) ?? new Set<string>();
      set.add(String(type));
      known.set(String(name), set);
    }
    const unknown = [...ALLOWED_FUNCTIONS].filter((f) => !known.has(f) && !PARSER_ONLY_NAMES.has(f));
    expect(unknown).toEqual([]);
    for (const f of ALLOWED_TABLE_FUNCTIONS) expect(known.get(f)?.has('table'), f).toBe(true);
  });
  it('contains no table, pragma or system function outside the table-function list', async () => {
    const r = await conn.runAndReadAll(
      "SELECT DISTINCT lower(function_name) FROM duckdb_functions() WHERE function_type IN ('table', 'pragma', 'table_macro')",
    );
    const tableOnly = r.getRowsJS().map((row) => String(row[0]));
    const scalarToo = new Set(
      (await conn.runAndReadAll("SELECT DISTINCT lower(function_name) FROM duckdb_functions() WHERE function_type IN ('scalar', 'aggregate', 'macro')")).getRowsJS().map((row) => String(row[0])),
    );
    // Names that are both a table function and a scalar/aggregate (range, generate_series, unnest,
    // repeat, histogram) are allowed as scalars only; as table functions only the explicit list applies.
    const leaked = tableOnly.filter((f) => ALLOWED_FUNCTIONS.has(f) && !scalarToo.has(f) && !ALLOWED_TABLE_FUNCTIONS.has(f));
    expect(leaked).toEqual([]);
    for (const f of ALLOWED_FUNCTIONS) expect(f.startsWith('duckdb_') || f.startsWith('pragma_') || f.startsWith('read_'), f).toBe(false);
  });
});
