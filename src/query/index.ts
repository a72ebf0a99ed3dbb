// The query path of `/v1/query`: guard (DuckDB's own parser + one allowlist), locked-down
// connections, a pool, and a runner that interrupts at the time limit and stops at the row cap.
export { checkSelect, leadingKeyword, MAX_AST_DEPTH, MAX_SQL_LENGTH, QUERYABLE_TABLES, type GuardResult } from './guard.js';
export { ALLOWED_FUNCTIONS, ALLOWED_TABLE_FUNCTIONS } from './allowlist.js';
export { prepareQueryConnection, type PrepareOptions } from './connection.js';
export { openQueryPool, runQuery, runQueryWithColumns, type QueryAnswer, type QueryPool, type QueryPoolOptions, type RunOptions } from './run.js';
export { toJsonValue, type JsonRow, type JsonValue } from './json.js';
