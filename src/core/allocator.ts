// glibc's malloc gives every thread that allocates an arena of its own, up to 8 a core, and an arena
// keeps the memory freed in it. The server's threads (the event loop, the decode workers, libuv's
// pool running DuckDB's calls) each held one, full of what ingest had freed. MALLOC_ARENA_MAX bounds
// them, but glibc reads it once, before the process runs any code, so the server cannot set it for
// itself: `npm start` sets it (package.json), and a server started without it says so at start.
import { settingDefault } from './config.js';

/** Whether this process allocates with glibc's malloc (Linux with glibc, not musl). */
export function usesGlibc(): boolean {
  if (process.platform !== 'linux') return false;
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  return typeof header?.glibcVersionRuntime === 'string';
}

/** The warning a server started without MALLOC_ARENA_MAX logs, or null when there is nothing to say. */
export function arenaWarning(env: NodeJS.ProcessEnv, glibc: boolean): string | null {
  if (!glibc || env['MALLOC_ARENA_MAX'] !== undefined) return null;
  const arenas = settingDefault('MALLOC_ARENA_MAX');
  return `MALLOC_ARENA_MAX is unset: glibc gives every thread its own malloc arena, which keeps freed memory (RSS grows past the memory budget's shares); start the server with MALLOC_ARENA_MAX=${arenas} in its environment, as \`npm start\` does`;
}
