// glibc's malloc settings: glibc reads them before the server runs, so `npm start` sets them and a
// server started without them warns (core/allocator.ts).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALLOCATOR_SETTINGS, allocatorWarning } from '../../src/core/allocator.js';
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
