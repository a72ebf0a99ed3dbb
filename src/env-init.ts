// Imported first by main.ts: process-wide settings that must precede everything else. DuckDB's node
// bindings run every call on libuv's thread pool (default 4 threads, shared with fs): with a writer,
// loaders, several query and read connections, raise it before the pool is first used.
import { setFlagsFromString } from 'node:v8';

process.env['UV_THREADPOOL_SIZE'] ??= '12';

// The event loop's heap is small (~10 MB live) but allocates fast under ingest; V8 then sized its
// next limit so close that incremental marking started every ~60 ms (180 full collections in 12 s
// of OTLP/HTTP load, ~0.9 s of pauses on the event loop, more on the helper threads). Letting a
// heap grow to 4x its live size after a collection, the top of V8's own range, left 67 and took
// 8-10% more spans/s (64 senders, alternating runs). Read at every collection, so setting it here,
// before anything allocates much, applies to the worker threads too.
setFlagsFromString('--heap-growing-percent=300');
