import { existsSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkEngine } from '../../src/cli/extensions.js';
import { run } from '../../src/cli/main.js';
import { WASM_DIR } from '../../src/core/paths.js';

describe('fetch-extensions (offline engine check)', () => {
  it('reports DuckDB parquet/json/icu loaded and working, and every WASM module', async () => {
    const r = await checkEngine();
    expect(r.duckdb_version).toMatch(/^v\d+\.\d+/);
    expect(r.extensions.map((e) => e.name).sort()).toEqual(['icu', 'json', 'parquet']);
    for (const e of r.extensions) {
      expect(e.loaded, e.name).toBe(true);
      expect(e.ok, `${e.name}: ${e.error ?? ''}`).toBe(true);
    }
    const present = existsSync(WASM_DIR) ? readdirSync(WASM_DIR).filter((f) => f.endsWith('.wasm')).map((f) => f.slice(0, -5)) : [];
    for (const name of present) expect(r.wasm.map((w) => w.name)).toContain(name);
    for (const w of r.wasm) {
      if (w.ok) expect(w.bytes).toBeGreaterThan(0);
      else expect(w.error).toBeTruthy();
    }
    expect(r.ok).toBe(r.extensions.every((e) => e.ok) && r.wasm.every((w) => w.ok));
  });

  it('`tds fetch-extensions` prints the report as indented JSON; exit code follows ok', async () => {
    let out = '';
    const code = await run(['fetch-extensions'], { stdout: { write: (s: string) => (out += s) }, stderr: { write: () => true }, env: {} });
    const report = JSON.parse(out);
    expect(out).toBe(JSON.stringify(report, null, 2) + '\n');
    expect(Object.keys(report)).toEqual(expect.arrayContaining(['duckdb_version', 'extensions', 'wasm', 'ok']));
    expect(code).toBe(report.ok ? 0 : 1);
  });
});
