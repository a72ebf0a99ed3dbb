// Hostile SQL for the /v1/query guard, built from the query tests' own corpora (valid analytic
// statements and known attacks): comments in every gap, stacked statements, unicode look-alikes and
// invisible characters, blocked table functions, spliced tokens, and inputs at and past the length
// and nesting limits.
import fc from 'fast-check';
import { HOSTILE, VALID } from '../query/corpus.js';
import { MAX_SQL_LENGTH } from '../../src/query/guard.js';

const fill = (sql: string): string => sql.replaceAll('{SPOOL}', '/tmp/spool').replaceAll('{OUT}', '/tmp/tds-fuzz-out.csv');

export const SEED_SQL: readonly string[] = [...VALID.map((v) => v.sql), ...HOSTILE.map((h) => fill(h.sql))];

const INSERTS = [
  '/* c */', '/*/', '/* /* nested */ */', '--\n', '-- trailing', '\n', '\t', ' ', '\r\n', '\u00a0', '\u200b', '\u202e', '\ufeff', '\u0000',
  ';', ';;', '; DROP TABLE svc_spans', "; COPY svc_spans TO '/tmp/tds-fuzz-out.csv'", '; SET threads = 1', '; ATTACH \'/tmp/x.duckdb\' AS x', '; PRAGMA version',
  '；', '＊', 'ＳＥＬＥＣＴ', 'ѕelect', '$1', '?', ':name', '$$x$$', "E'\\x00'", "'\\''", '"', "'", '`', '\\',
  'WITH x AS (SELECT 1) ', 'UNION ALL SELECT * FROM read_csv(\'/etc/passwd\')', ' FROM glob(\'/*\')', ' FROM duckdb_settings()', ' FROM query(\'SELECT 1\')',
  ' FROM range(100000000000)', ' FROM svc_spans, svc_spans, svc_spans', ' FROM lake.main.svc_spans', ' FROM system.main.duckdb_tables()', ' AT (VERSION => 1)',
  'getenv(\'HOME\')', 'current_setting(\'threads\')', 'nextval(\'s\')', 'read_text(\'/etc/passwd\')', 'sql_auto_complete(\'SEL\')', 'json_serialize_sql(\'SELECT 1\')',
  'pg_catalog.', 'main.', 'lake.', 'temp.', 'COLLATE nocase', '::BLOB', '::MAP(VARCHAR, VARCHAR)', '[1,2,3]', '{\'a\': 1}', 'lambda x: x', 'x -> x',
  'SELECT', 'FROM', 'WHERE', 'GROUP BY ALL', 'QUALIFY', 'PIVOT', 'UNPIVOT', 'DESCRIBE', 'SUMMARIZE', 'SHOW', 'EXPLAIN', 'INSTALL httpfs', 'LOAD httpfs', 'CALL',
  'ＦＲＯＭ', '𝐒𝐄𝐋𝐄𝐂𝐓', '\ud800', '\udc00', 'é', 'ß', 'İ',
];

/** Inputs at the limits: length, nesting, literal size. */
const LARGE: readonly fc.Arbitrary<string>[] = [
  fc.integer({ min: 1, max: 3000 }).map((n) => 'SELECT ' + '('.repeat(n) + '1' + ')'.repeat(n)),
  fc.integer({ min: 1, max: 20_000 }).map((n) => 'SELECT ' + '1+'.repeat(n) + '1'),
  fc.integer({ min: 1, max: 5000 }).map((n) => 'SELECT * FROM svc_spans WHERE service_name IN (' + Array.from({ length: n }, (_, i) => `'s${i}'`).join(',') + ')'),
  fc.integer({ min: 1, max: 2000 }).map((n) => 'SELECT * FROM ' + '(SELECT * FROM '.repeat(n) + 'svc_spans' + ') t'.repeat(n)),
  fc.integer({ min: 1, max: 2000 }).map((n) => 'SELECT ' + '[' .repeat(n) + '1' + ']'.repeat(n)),
  fc.integer({ min: 1, max: 2000 }).map((n) => 'SELECT 1' + ' UNION ALL SELECT 1'.repeat(n)),
  fc.integer({ min: MAX_SQL_LENGTH - 20, max: MAX_SQL_LENGTH + 20 }).map((n) => ("SELECT '" + 'x'.repeat(n)).slice(0, n - 1) + "'"),
  fc.constant('SELECT 1' + ';'.repeat(50_000)),
  fc.constant('/*'.repeat(30_000)),
];

const insertOp = fc.record({ at: fc.nat(), what: fc.constantFrom(...INSERTS) });
const cutOp = fc.record({ at: fc.nat(), len: fc.integer({ min: 1, max: 20 }) });

/** A corpus statement with up to four insertions or cuts. */
const mutatedSql = fc
  .tuple(fc.constantFrom(...SEED_SQL), fc.array(fc.oneof(insertOp, cutOp), { maxLength: 4 }))
  .map(([sql, ops]) =>
    ops.reduce((s, op) => {
      const at = op.at % (s.length + 1);
      return 'what' in op ? s.slice(0, at) + op.what + s.slice(at) : s.slice(0, at) + s.slice(at + op.len);
    }, sql),
  );

/** Two corpus statements spliced at random points (valid prefix, hostile suffix and the reverse). */
const spliced = fc.tuple(fc.constantFrom(...SEED_SQL), fc.constantFrom(...SEED_SQL), fc.nat(), fc.nat()).map(([a, b, i, j]) => a.slice(0, i % (a.length + 1)) + b.slice(j % (b.length + 1)));

/** Statements as a flat token soup. */
const soup = fc.array(fc.constantFrom(...INSERTS, 'svc_spans', 'count(*)', '1', 'x', ',', '(', ')', '=', 'AND', 'OR', 'NOT', '*'), { maxLength: 30 }).map((t) => t.join(' '));

export const hostileSql: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: mutatedSql, weight: 6 },
  { arbitrary: spliced, weight: 2 },
  { arbitrary: soup, weight: 2 },
  { arbitrary: fc.oneof(...LARGE), weight: 1 },
  { arbitrary: fc.string({ maxLength: 80, unit: 'binary' }), weight: 1 },
);
