// glibc's malloc settings: glibc reads them before the server runs, so `npm start` sets them and a
// server started without them warns (core/allocator.ts).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { ALLOCATOR_SETTINGS, allocatorEnv, allocatorWarning, heapTrim, trimHeaps, usesGlibc, type HeapTrim } from '../../src/core/allocator.js';
import { loadConfig, settingDefault } from '../../src/core/config.js';
import { PACKAGE_ROOT } from '../../src/core/paths.js';

const START = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts['start']!;

/** The allocator settings `npm start`'s command line gives the server, the server replaced by a probe. */
function startedWith(env: Record<string, string>): Record<string, string> {
  const print = `console.log(JSON.stringify(Object.fromEntries(${JSON.stringify(ALLOCATOR_SETTINGS)}.map((k) => [k, process.env[k] ?? 'unset']))))`;
  const probe = START.replace('node scripts/start.mjs', `"${process.execPath}" -e '${print}'`);
  expect(probe, 'the start script no longer runs `node scripts/start.mjs`').not.toBe(START);
  return JSON.parse(execFileSync('sh', ['-c', probe], { env: { PATH: process.env['PATH'] ?? '', ...env }, encoding: 'utf8' })) as Record<string, string>;
}

describe("glibc's malloc settings", () => {
  it('are set by `npm start` to their documented defaults when unset', () => {
    expect(startedWith({})).toEqual({ MALLOC_ARENA_MAX: settingDefault('MALLOC_ARENA_MAX'), MALLOC_MMAP_THRESHOLD_: settingDefault('MALLOC_MMAP_THRESHOLD_') });
  });

  it('are left as the operator set them', () => {
    expect(startedWith({ MALLOC_ARENA_MAX: '7', MALLOC_MMAP_THRESHOLD_: '65536' })).toEqual({ MALLOC_ARENA_MAX: '7', MALLOC_MMAP_THRESHOLD_: '65536' });
  });

  it('are warned about when unset under glibc, naming the ones unset, and only then', () => {
    const arenas = allocatorWarning({ MALLOC_MMAP_THRESHOLD_: '65536' }, true);
    expect(arenas).toContain(`MALLOC_ARENA_MAX=${settingDefault('MALLOC_ARENA_MAX')}`);
    expect(arenas).not.toContain('MALLOC_MMAP_THRESHOLD_=');
    expect(allocatorWarning({}, true)).toContain(`MALLOC_MMAP_THRESHOLD_=${settingDefault('MALLOC_MMAP_THRESHOLD_')}`);
    expect(allocatorWarning({ MALLOC_ARENA_MAX: '4', MALLOC_MMAP_THRESHOLD_: '65536' }, true)).toBeNull();
    expect(allocatorWarning({}, false)).toBeNull();
  });

  it('are validated like every setting', () => {
    expect(() => loadConfig({ MALLOC_ARENA_MAX: 'many' })).toThrow(/MALLOC_ARENA_MAX="many"/);
    expect(() => loadConfig({ MALLOC_MMAP_THRESHOLD_: '1GB' })).toThrow(/MALLOC_MMAP_THRESHOLD_="1GB"/);
    expect(loadConfig({ MALLOC_ARENA_MAX: '4', MALLOC_MMAP_THRESHOLD_: '65536' })).toMatchObject({ mallocArenaMax: 4, mallocMmapThreshold: 65536 });
  });
});

/**
 * A process that allocates ~200 MiB in 10-17 KiB buffers, keeps one in 16, frees the rest and
 * collects, then trims once (`trim`) or not: its RSS (bytes) at start, once freed, and at the end.
 */
function freeAndTrim(trim: boolean): { start: number; freed: number; end: number } {
  const allocator = pathToFileURL(join(PACKAGE_ROOT, 'dist', 'src', 'core', 'allocator.js')).href;
  const script = `
    import { heapTrim } from ${JSON.stringify(allocator)};
    const rss = () => process.memoryUsage().rss;
    const start = rss();
    const keep = [];
    let drop = [];
    for (let i = 0; i < 16000; i++) (i % 16 ? drop : keep).push(Buffer.alloc(10000 + (i % 8) * 1000, 1));
    drop = null;
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 50));
    globalThis.gc();
    const freed = rss();
    if (${trim}) await new Promise((ok, fail) => heapTrim()((err) => (err ? fail(err) : ok())));
    console.log(JSON.stringify({ start, freed, end: rss(), kept: keep.length }));`;
  const out = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { env: { PATH: process.env['PATH'] ?? '', ...allocatorEnv() }, encoding: 'utf8' });
  return JSON.parse(out) as { start: number; freed: number; end: number };
}

const MiB = 2 ** 20;

describe("glibc's heaps, trimmed", () => {
  // malloc_trim is glibc's: elsewhere (musl, macOS) there is nothing to trim with
  it.runIf(usesGlibc())('gives back memory that freeing alone leaves resident', () => {
    const untrimmed = freeAndTrim(false);
    // freed among the buffers kept, the memory stays: glibc gives back only a heap's top
    expect(untrimmed.end - untrimmed.start).toBeGreaterThan(100 * MiB);
    const trimmed = freeAndTrim(true);
    expect(trimmed.freed - trimmed.start).toBeGreaterThan(100 * MiB);
    expect(trimmed.freed - trimmed.end).toBeGreaterThan(100 * MiB);
  });

  it('is unavailable, with the reason, where the allocator is not glibc', () => {
    expect(heapTrim(false)).toEqual({ unavailable: 'not glibc' });
  });

  it('runs one trim at a time, every interval, until stopped', () => {
    vi.useFakeTimers();
    try {
      const pending: Array<(err: unknown) => void> = [];
      const trim: HeapTrim = (done) => void pending.push(done);
      const trimming = trimHeaps(trim, 1000);
      vi.advanceTimersByTime(999);
      expect(pending).toHaveLength(0);
      vi.advanceTimersByTime(1);
      expect(pending).toHaveLength(1);
      vi.advanceTimersByTime(3000); // still running: no second trim beside it
      expect(pending).toHaveLength(1);
      pending[0]!(null);
      vi.advanceTimersByTime(1000);
      expect(pending).toHaveLength(2);
      trimming.stop();
      pending[1]!(null);
      vi.advanceTimersByTime(5000);
      expect(pending).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });
});
