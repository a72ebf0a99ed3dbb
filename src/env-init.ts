// Imported first by main.ts: process-wide settings that must precede everything else. DuckDB's node
// bindings run every call on libuv's thread pool (default 4 threads, shared with fs): with a writer,
// loaders, several query and read connections, raise it before the pool is first used.
import { setFlagsFromString } from 'node:v8';

process.env['UV_THREADPOOL_SIZE'] ??= '12';

// A small heap that allocates fast otherwise marks many times a second under ingest; 4x growth takes
// more spans/s in bench:ingest. Set before anything allocates much, so the worker threads get it too.
setFlagsFromString('--heap-growing-percent=300');
