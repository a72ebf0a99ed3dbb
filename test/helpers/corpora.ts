// The one check of the tests that read third-party corpora (CORPORA_DIR). On a developer's machine
// without them those tests skip; under CI (the `CI` environment variable set, as `.ci/run` does) a
// missing corpus fails the test file, so the suite cannot pass with its corpus tests silently skipped.
import { existsSync } from 'node:fs';
import { relative } from 'node:path';
import { CORPORA_DIR } from '../../src/core/paths.js';

/** Whether `path` (a corpus file or folder under CORPORA_DIR) is present; throws under CI when it is not. */
export function corpusPresent(path: string): boolean {
  if (existsSync(path)) return true;
  const what = `corpus ${relative(CORPORA_DIR, path) || '.'} is absent from ${CORPORA_DIR}`;
  if (process.env['CI']) throw new Error(`${what}: CI must run with the corpora (the tests that need them would be skipped)`);
  console.warn(`${what}: the tests that need it are skipped`);
  return false;
}
