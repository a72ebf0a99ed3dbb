// Where the package's own files live, whether this module runs from src/ (vitest) or dist/src/ (built).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'asconfig.json'))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('package root not found above ' + fileURLToPath(import.meta.url));
    dir = up;
  }
}

export const PACKAGE_ROOT = findRoot();
export const WASM_DIR = join(PACKAGE_ROOT, 'build', 'wasm');
export const DIST_SRC = join(PACKAGE_ROOT, 'dist', 'src');
export const PROTO_DIR = join(PACKAGE_ROOT, 'proto');
/** The shared third-party corpora; absent outside this workplace, so tests that need them skip. */
export const CORPORA_DIR = join(PACKAGE_ROOT, '..', 'shared', 'corpora');
