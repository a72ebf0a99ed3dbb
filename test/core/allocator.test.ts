// MALLOC_ARENA_MAX: glibc reads it before the server runs, so `npm start` sets it and a server started
// without it warns (core/allocator.ts).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { arenaWarning } from '../../src/core/allocator.js';
import { loadConfig, settingDefault } from '../../src/core/config.js';
import { PACKAGE_ROOT } from '../../src/core/paths.js';

const START = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts['start']!;

/** What `npm start`'s command line puts in the server's environment, the server replaced by a probe. */
function startedWith(env: Record<string, string>): string {
  const probe = START.replace('node scripts/start.mjs', `"${process.execPath}" -p "process.env.MALLOC_ARENA_MAX ?? 'unset'"`);
  expect(probe, 'the start script no longer runs `node scripts/start.mjs`').not.toBe(START);
  return execFileSync('sh', ['-c', probe], { env: { PATH: process.env['PATH'] ?? '', ...env }, encoding: 'utf8' }).trim();
}

describe('MALLOC_ARENA_MAX', () => {
  it('is set by `npm start` to the documented default when unset', () => {
    expect(startedWith({})).toBe(settingDefault('MALLOC_ARENA_MAX'));
  });

  it('is left as the operator set it', () => {
    expect(startedWith({ MALLOC_ARENA_MAX: '7' })).toBe('7');
  });

  it('is warned about when unset under glibc, and only then', () => {
    expect(arenaWarning({}, true)).toContain(`MALLOC_ARENA_MAX=${settingDefault('MALLOC_ARENA_MAX')}`);
    expect(arenaWarning({ MALLOC_ARENA_MAX: '4' }, true)).toBeNull();
    expect(arenaWarning({}, false)).toBeNull();
  });

  it('is validated like every setting', () => {
    expect(() => loadConfig({ MALLOC_ARENA_MAX: 'many' })).toThrow(/MALLOC_ARENA_MAX="many"/);
    expect(loadConfig({ MALLOC_ARENA_MAX: '4' }).mallocArenaMax).toBe(4);
  });
});
