// The installed `tds` binary (package.json bin → dist/src/cli/main.js). Runs after `npm run build`
// (npm test builds first); skipped when the build output is absent.
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/core/paths.js';

const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };
const BIN = join(PACKAGE_ROOT, pkg.bin.tds!);
const exec = promisify(execFile);

async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

async function tds(args: string[]): Promise<{ code: number; out: unknown; stdout: string }> {
  try {
    const { stdout } = await exec(process.execPath, [BIN, ...args], { env: { ...process.env, SVC_URL: `http://127.0.0.1:${await closedPort()}` }, timeout: 30_000 });
    return { code: 0, out: JSON.parse(stdout), stdout };
  } catch (e) {
    const err = e as { code: number; stdout: string };
    return { code: err.code, out: JSON.parse(err.stdout), stdout: err.stdout };
  }
}

describe.skipIf(!existsSync(BIN))('tds binary', () => {
  it('starts with a node shebang', () => {
    expect(readFileSync(BIN, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
  });

  it('--help: JSON, exit 0', async () => {
    const r = await tds(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(JSON.stringify(r.out, null, 2) + '\n');
  });

  it('an unbounded query is refused with exit 1; a usage error exits 2; no server → CONNECTION_REFUSED', async () => {
    expect(await tds(['query', 'SELECT * FROM svc_spans'])).toMatchObject({ code: 1, out: { error: { code: 'FULL_SCAN_REFUSED' } } });
    expect(await tds(['frobnicate'])).toMatchObject({ code: 2, out: { error: { code: 'USAGE' } } });
    expect(await tds(['healthcheck'])).toMatchObject({ code: 1, out: { error: { code: 'CONNECTION_REFUSED' } } });
  });
});
