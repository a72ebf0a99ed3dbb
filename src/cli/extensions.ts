// `tds fetch-extensions`: an offline check that every engine part the server needs is present and
// loadable. DuckDB's Parquet, JSON and ICU are statically linked, so nothing is (or may be)
// downloaded: automatic extension install/load is switched off before anything runs. The JSON and
// Parquet round trips write one tiny file each to a private temporary directory, removed afterwards.
import { mkdtempSync, readdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { PACKAGE_ROOT, WASM_DIR } from '../core/paths.js';
import { sqlString } from '../store/sql.js';

export interface ExtensionReport {
  name: string;
  loaded: boolean;
  install_mode: string | null;
  ok: boolean;
  check: string;
  error?: string;
}

export interface WasmReport {
  name: string;
  ok: boolean;
  bytes: number;
  exports?: number;
  error?: string;
}

export interface EngineReport {
  duckdb_version: string | null;
  extensions: ExtensionReport[];
  wasm: WasmReport[];
  ok: boolean;
  error?: { code: string; message: string; hint: string };
}

const REQUIRED = ['parquet', 'json', 'icu'] as const;

async function checkDuckDb(report: EngineReport): Promise<void> {
  let api: typeof import('@duckdb/node-api');
  try {
    api = await import('@duckdb/node-api');
  } catch (e) {
    report.extensions = REQUIRED.map((name) => ({ name, loaded: false, install_mode: null, ok: false, check: 'not run', error: 'DuckDB did not load' }));
    report.error = { code: 'ENGINE_MISSING', message: `@duckdb/node-api failed to load: ${(e as Error).message}`, hint: 'run `npm ci` on this machine (the native binding is platform specific)' };
    return;
  }
  const instance = await api.DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
  const conn = await instance.connect();
  const dir = mkdtempSync(join(tmpdir(), 'tds-engine-check-'));
  try {
    const v = await conn.runAndReadAll('SELECT version() AS v');
    report.duckdb_version = String(v.getRowObjects()[0]?.v ?? api.version());
    const rows = (await conn.runAndReadAll(
      `SELECT extension_name, loaded, install_mode FROM duckdb_extensions() WHERE extension_name IN (${REQUIRED.map(sqlString).join(', ')})`,
    )).getRowObjects();
    const byName = new Map(rows.map((r) => [String(r.extension_name), r]));

    const checks: Record<(typeof REQUIRED)[number], { what: string; run: () => Promise<void> }> = {
      json: {
        what: 'JSON write/read round trip',
        run: async () => {
          const f = join(dir, 'check.json');
          await conn.run(`COPY (SELECT 42 AS n, 'x' AS s, [1, 2] AS l) TO ${sqlString(f)} (FORMAT json)`);
          const r = (await conn.runAndReadAll(`SELECT n, s, json_extract_string(to_json(l), '$[1]') AS second FROM read_json(${sqlString(f)})`)).getRowObjects();
          if (r.length !== 1 || Number(r[0]!.n) !== 42 || r[0]!.s !== 'x' || r[0]!.second !== '2') throw new Error(`unexpected rows ${JSON.stringify(r, (_k, x) => (typeof x === 'bigint' ? String(x) : x))}`);
        },
      },
      parquet: {
        what: 'Parquet write/read round trip',
        run: async () => {
          const f = join(dir, 'check.parquet');
          await conn.run(`COPY (SELECT range AS i, TIMESTAMP '2025-01-01' + to_microseconds(range) AS ts FROM range(1000)) TO ${sqlString(f)} (FORMAT parquet)`);
          const r = (await conn.runAndReadAll(`SELECT count(*) AS c, sum(i) AS s FROM read_parquet(${sqlString(f)}) WHERE ts >= TIMESTAMP '2025-01-01'`)).getRowObjects();
          if (Number(r[0]!.c) !== 1000 || Number(r[0]!.s) !== 499500) throw new Error(`unexpected rows ${JSON.stringify(r, (_k, x) => (typeof x === 'bigint' ? String(x) : x))}`);
        },
      },
      icu: {
        what: 'time-zone conversion',
        run: async () => {
          const r = (await conn.runAndReadAll(`SELECT strftime(timezone('America/New_York', TIMESTAMPTZ '2025-01-01 12:00:00+00'), '%H') AS h`)).getRowObjects();
          if (r[0]!.h !== '07') throw new Error(`expected 07, got ${String(r[0]!.h)}`);
        },
      },
    };
    for (const name of REQUIRED) {
      const row = byName.get(name);
      const loaded = row?.loaded === true;
      const entry: ExtensionReport = { name, loaded, install_mode: row ? String(row.install_mode) : null, ok: false, check: checks[name].what };
      try {
        await checks[name].run();
        entry.ok = loaded;
        if (!loaded) entry.error = 'not loaded';
      } catch (e) {
        entry.error = (e as Error).message;
      }
      report.extensions.push(entry);
    }
  } finally {
    conn.closeSync();
    instance.closeSync();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function checkWasm(report: EngineReport): Promise<void> {
  const expected = new Set<string>();
  const assemblyDir = join(PACKAGE_ROOT, 'assembly');
  if (existsSync(assemblyDir)) {
    for (const f of readdirSync(assemblyDir)) if (f.endsWith('.ts') && !f.startsWith('_')) expected.add(f.slice(0, -3));
  }
  const present = existsSync(WASM_DIR) ? readdirSync(WASM_DIR).filter((f) => f.endsWith('.wasm')).map((f) => basename(f, '.wasm')) : [];
  for (const p of present) expected.add(p);
  const { instantiateWasm } = await import('../compute/wasm.js');
  for (const name of [...expected].sort()) {
    const path = join(WASM_DIR, `${name}.wasm`);
    if (!existsSync(path)) {
      report.wasm.push({ name, ok: false, bytes: 0, error: `missing ${path}: run \`npm run build\`` });
      continue;
    }
    const bytes = readFileSync(path);
    try {
      const mod = new WebAssembly.Module(bytes);
      instantiateWasm<object>(name); // the same imports the service gives it
      report.wasm.push({ name, ok: true, bytes: bytes.length, exports: WebAssembly.Module.exports(mod).length });
    } catch (e) {
      report.wasm.push({ name, ok: false, bytes: bytes.length, error: (e as Error).message });
    }
  }
}

export async function checkEngine(): Promise<EngineReport> {
  const report: EngineReport = { duckdb_version: null, extensions: [], wasm: [], ok: false };
  try {
    await checkDuckDb(report);
  } catch (e) {
    report.error = { code: 'ENGINE_CHECK_FAILED', message: (e as Error).message, hint: 'reinstall with `npm ci`' };
  }
  await checkWasm(report);
  report.ok = !report.error && report.extensions.length === REQUIRED.length && report.extensions.every((x) => x.ok) && report.wasm.every((w) => w.ok);
  return report;
}
