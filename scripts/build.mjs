#!/usr/bin/env node
// Builds what the service runs: every assembly/<name>.ts (names starting with "_" are shared
// includes) to build/wasm/<name>.wasm, then the TypeScript to dist/. Each step is skipped when its
// outputs are newer than every input, so `npm start` and `npm test` stay fast on a warm tree.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const force = process.argv.includes('--force');
const check = process.argv.includes('--check'); // exit 1 when something is stale, build nothing
const wasmOnly = process.argv.includes('--wasm-only');

function newest(dir, exts) {
  let t = 0;
  if (!existsSync(dir)) return t;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) t = Math.max(t, newest(p, exts));
    else if (exts.some((x) => e.name.endsWith(x))) t = Math.max(t, statSync(p).mtimeMs);
  }
  return t;
}
const mtime = (p) => (existsSync(p) ? statSync(p).mtimeMs : 0);
const bin = (name) => join(root, 'node_modules', '.bin', name);

const asOptions = JSON.parse(readFileSync(join(root, 'asconfig.json'), 'utf8')).options;
const entries = existsSync(join(root, 'assembly'))
  ? readdirSync(join(root, 'assembly')).filter((f) => f.endsWith('.ts') && !f.startsWith('_'))
  : [];
const sharedInputs = Math.max(
  mtime(join(root, 'asconfig.json')),
  ...readdirSync(join(root, 'assembly')).filter((f) => f.startsWith('_')).map((f) => mtime(join(root, 'assembly', f))),
  0,
);

let stale = false;
mkdirSync(join(root, 'build', 'wasm'), { recursive: true });
for (const f of entries) {
  const src = join(root, 'assembly', f);
  const out = join(root, 'build', 'wasm', f.replace(/\.ts$/, '.wasm'));
  if (!force && mtime(out) > Math.max(mtime(src), sharedInputs)) continue;
  stale = true;
  if (check) continue;
  const args = [
    relative(root, src), '--outFile', relative(root, out),
    '--optimizeLevel', String(asOptions.optimizeLevel), '--shrinkLevel', String(asOptions.shrinkLevel),
    '--runtime', asOptions.runtime, '--bindings', asOptions.bindings,
  ];
  if (asOptions.exportRuntime) args.push('--exportRuntime');
  if (asOptions.noAssert) args.push('--noAssert');
  execFileSync(bin('asc'), args, { cwd: root, stdio: 'inherit' });
}

if (wasmOnly) process.exit(0);
const tsInputs = Math.max(newest(join(root, 'src'), ['.ts']), newest(join(root, 'testkit'), ['.ts']), newest(join(root, 'bench'), ['.ts']), mtime(join(root, 'tsconfig.json')));
const tsStamp = join(root, 'dist', '.stamp');
if (force || mtime(tsStamp) <= tsInputs) {
  stale = true;
  if (!check) {
    execFileSync(bin('tsc'), ['-p', 'tsconfig.json'], { cwd: root, stdio: 'inherit' });
    chmodSync(join(root, 'dist', 'src', 'cli', 'main.js'), 0o755); // the package's `tds` bin
    writeFileSync(tsStamp, String(Date.now()));
  }
}
if (check) process.exit(stale ? 1 : 0);
