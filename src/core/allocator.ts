// glibc's malloc gives every thread that allocates an arena of its own, up to 8 a core, and an arena
// keeps the memory freed in it; and it raises the size from which an allocation is mapped on its own
// (and unmapped when freed) as large buffers are freed, so request bodies end in the arenas too. The
// server's threads (the event loop, the decode workers, libuv's pool running DuckDB's calls) held
// hundreds of MiB so. ALLOCATOR_SETTINGS bound both, but glibc reads them once, before the process
// runs any code, so the server cannot set them for itself: `npm start` sets them (package.json), the
// testkit starts servers the same way, and a server started without them says so.
import { createRequire } from 'node:module';
import { settingDefault } from './config.js';

/** glibc's tunables the server is started with (SETTINGS holds their defaults and meaning). */
export const ALLOCATOR_SETTINGS = ['MALLOC_ARENA_MAX', 'MALLOC_MMAP_THRESHOLD_'] as const;

/** Each allocator setting at its default, for a process about to start a server. */
export function allocatorEnv(): Record<string, string> {
  return Object.fromEntries(ALLOCATOR_SETTINGS.map((k) => [k, settingDefault(k)]));
}

/** Whether this process allocates with glibc's malloc (Linux with glibc, not musl). */
export function usesGlibc(): boolean {
  if (process.platform !== 'linux') return false;
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  return typeof header?.glibcVersionRuntime === 'string';
}

/** The warning a server started without some allocator setting logs, or null when there is nothing to say. */
export function allocatorWarning(env: NodeJS.ProcessEnv, glibc: boolean): string | null {
  const unset = ALLOCATOR_SETTINGS.filter((k) => env[k] === undefined);
  if (!glibc || !unset.length) return null;
  const set = unset.map((k) => `${k}=${settingDefault(k)}`).join(' ');
  return `${unset.join(' and ')} unset: glibc's malloc then keeps memory freed by every thread in arenas of their own (RSS grows past the memory budget's shares); start the server with ${set} in its environment, as \`npm start\` does`;
}

/**
 * How often the heaps are trimmed (trimHeaps): each trim walks every heap on one of libuv's threads.
 * Chosen on bench:overload (OTLP/gRPC, RSS after the flood against before it): every 2 s gave back
 * no more than every 10 s (bench/README.md).
 */
export const TRIM_INTERVAL_MS = 10_000;

/** Calls back once glibc's malloc_trim(0) has run, off the event loop. */
export type HeapTrim = (done: (err: unknown) => void) => void;

/**
 * glibc's free() gives memory back to the system only from the top of a heap, so pages freed among
 * allocations that live on stay resident: after a flood of gRPC exports the main heap kept what the
 * flood had freed (bench/README.md, bench:overload). malloc_trim(0) returns every whole free page of
 * every arena. Node cannot call it; koffi (an FFI, prebuilt per platform) can, and its asynchronous
 * call runs it on libuv's pool. Where it cannot be had, the reason: not glibc, or no koffi build.
 */
export function heapTrim(glibc = usesGlibc()): HeapTrim | { unavailable: string } {
  if (!glibc) return { unavailable: 'not glibc' };
  try {
    const koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi');
    const trim = koffi.load('libc.so.6').func('int malloc_trim(size_t)');
    return (done) => trim.async(0, (err: unknown) => done(err));
  } catch (err) {
    return { unavailable: `koffi: ${(err as Error).message}` };
  }
}

/** Trims the heaps every `intervalMs`, one trim at a time; stop() ends it. */
export function trimHeaps(trim: HeapTrim, intervalMs = TRIM_INTERVAL_MS): { stop(): void } {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    trim(() => (running = false));
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
