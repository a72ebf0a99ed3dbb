#!/usr/bin/env node
// `npm start`: build only when the build is missing or stale, then run the built server in this process.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
try {
  execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--check'], { stdio: 'ignore' });
} catch {
  execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { stdio: 'inherit' });
}
await import(pathToFileURL(join(root, 'dist', 'src', 'main.js')).href);
