// Each module's README names its files: every TypeScript file under src/ is named, in backticks, in
// the README of the nearest folder above it that has one (by its path from that folder or from the
// repository, or by its name in a subfolder's list). A file added without a line saying what it does
// fails here.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/core/paths.js';

const SRC = join(PACKAGE_ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** The README that answers for `file`: its folder's, else the nearest one above it within src/. */
function readmeOf(file: string): string {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'README.md'))) return join(dir, 'README.md');
    if (dir === SRC) throw new Error('src/README.md is missing');
  }
}

it('every file under src/ is named in its module README', () => {
  const unnamed = sourceFiles(SRC).filter((file) => {
    const readme = readmeOf(file);
    const text = readFileSync(readme, 'utf8');
    const names = ['`' + relative(dirname(readme), file), '`' + relative(PACKAGE_ROOT, file), '`' + basename(file) + '`'];
    return !names.some((n) => text.includes(n));
  });
  expect(unnamed.map((f) => relative(PACKAGE_ROOT, f))).toEqual([]);
});

it('finds files in nested folders (the check itself)', () => {
  expect(sourceFiles(SRC).map((f) => relative(SRC, f))).toEqual(expect.arrayContaining(['main.ts', join('diagnose', 'evidence', 'paths.ts')]));
});
