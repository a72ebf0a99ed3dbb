import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkEngine } from '../../src/cli/extensions.js';
import { run } from '../../src/cli/main.js';
import { PACKAGE_ROOT, WASM_DIR } from '../../src/core/paths.js';

/** The WASM modules a build makes: assembly/<name>.ts, names starting with "_" being shared includes. */
const BUILT = readdirSync(join(PACKAGE_ROOT, 'assembly'))
  .filter((f) => f.endsWith('.ts') && !f.startsWith('_'))
  .map((f) => f.slice(0, -3))
  .sort();

describe('fetch-extensions (offline engine check)', () => {
  it('reports DuckDB parquet/json/icu loaded and working, and every WASM module', async () => {
    const r = await checkEngine();
    expect(r.duckdb_version).toMatch(/^v\d+\.\d+/);
    expect(r.extensions.map((e) => e.name).sort()).toEqual(['icu', 'json', 'parquet']);
    for (const e of r.extensions) {
      expect(e.loaded, e.name).toBe(true);
      expect(e.ok, `${e.name}: ${e.error ?? ''}`).toBe(true);
    }
    // The built repository (npm test builds first) has one working module per assembly/<name>.ts.
    expect(r.wasm.map((w) => w.name)).toEqual(BUILT);
    for (const w of r.wasm) {
      expect(w.ok, `${w.name}: ${w.error ?? ''}`).toBe(true);
      expect(w.bytes, w.name).toBe(statSync(join(WASM_DIR, `${w.name}.wasm`)).size);
      expect(w.exports, w.name).toBeGreaterThan(0);
    }
    expect(r.error).toBeUndefined();
    expect(r.ok).toBe(true);
  });

  it('`tds fetch-extensions` prints the report as indented JSON and exits 0 on a built repository', async () => {
    let out = '';
    const code = await run(['fetch-extensions'], { stdout: { write: (s: string) => (out += s) }, stderr: { write: () => true }, env: {} });
    const report = JSON.parse(out);
    expect(out).toBe(JSON.stringify(report, null, 2) + '\n');
    expect(Object.keys(report)).toEqual(expect.arrayContaining(['duckdb_version', 'extensions', 'wasm', 'ok']));
    expect(report.ok).toBe(true);
    expect(code).toBe(0);
  });
});
