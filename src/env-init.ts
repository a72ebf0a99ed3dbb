// Imported first by main.ts. DuckDB's node bindings run every call on libuv's thread pool (default
// 4 threads, shared with fs): with a writer, several query and read connections, raise it before
// the pool is first used.
process.env['UV_THREADPOOL_SIZE'] ??= '12';
export {};
