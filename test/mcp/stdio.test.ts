// `tds mcp` over stdio: the built binary spawned by the SDK's own client, pointed at a real server
// with SVC_URL, through the shared suite; and what a stdio server must survive on its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { PACKAGE_ROOT } from '../../src/core/paths.js';
import { useTestServer } from '../helpers/server.js';
import { call, mcpSuite, seed } from './suite.js';

const BIN = join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js');
const srv = useTestServer();
let client: Client;
let traceId = '';

/** The SDK client on a freshly spawned `tds mcp`. */
async function connect(env: Record<string, string>): Promise<{ client: Client; transport: StdioClientTransport }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp'], env: { PATH: process.env['PATH'] ?? '', ...env }, stderr: 'pipe' });
  const c = new Client({ name: 'tds-test', version: '1.0.0' });
  await c.connect(transport);
  return { client: c, transport };
}

beforeAll(async () => {
  ({ traceId } = await seed(srv));
  ({ client } = await connect({ SVC_URL: srv.api }));
});

afterAll(async () => {
  await client?.close();
});

mcpSuite('stdio (tds mcp)', { client: () => client, traceId: () => traceId });

describe('tds mcp on its own', () => {
  it('with no server at SVC_URL, every tool answers a tool error naming the cause, and the process keeps serving', async () => {
    const { client: c } = await connect({ SVC_URL: 'http://127.0.0.1:1' });
    try {
      for (let i = 0; i < 2; i++) {
        const out = await call(c, 'list_services');
        expect(out.isError).toBe(true);
        expect(out.value.error.code).toMatch(/^CONNECTION_/);
        expect(out.value.error.hint).toMatch(/SVC_URL/);
      }
    } finally {
      await c.close();
    }
  });

  it('exits 0 when the client closes stdin', async () => {
    const { client: c, transport } = await connect({ SVC_URL: srv.api });
    const pid = transport.pid!;
    await c.close();
    // close() ends stdin; the process must be gone shortly after, on its own.
    const deadline = Date.now() + 5_000;
    let alive = true;
    while (alive && Date.now() < deadline) {
      try {
        process.kill(pid, 0);
        await new Promise((r) => setTimeout(r, 50));
      } catch {
        alive = false;
      }
    }
    expect(alive).toBe(false);
  });
});

describe('the README\'s mcpServers snippet', () => {
  const readme = readFileSync(join(PACKAGE_ROOT, 'README.md'), 'utf8');
  const block = /```json\n(\{\n  "mcpServers"[\s\S]*?)```/.exec(readme)?.[1];
  const servers = JSON.parse(block ?? '{}').mcpServers as Record<string, { command?: string; args?: string[]; env?: Record<string, string>; type?: string; url?: string }>;
  // The snippet's addresses are the defaults; the test server listens on a free port instead.
  const local = (url: string) => url.replace('http://127.0.0.1:9999', srv.api);

  it('its stdio entry starts `tds mcp` from the PATH and serves the tools', async () => {
    const entry = servers['tds']!;
    const bin = mkdtempSync(join(tmpdir(), 'tds-bin-'));
    symlinkSync(BIN, join(bin, entry.command!)); // what `npm link` does
    const env = Object.fromEntries(Object.entries(entry.env ?? {}).map(([k, v]) => [k, local(v)]));
    const c = new Client({ name: 'readme', version: '1.0.0' });
    try {
      await c.connect(new StdioClientTransport({ command: entry.command!, args: entry.args ?? [], env: { PATH: `${bin}:${process.env['PATH'] ?? ''}`, ...env } }));
      expect((await call(c, 'list_services')).value.services.length).toBeGreaterThan(0);
    } finally {
      await c.close();
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it('its HTTP entry is the /mcp endpoint', async () => {
    const entry = servers['tds-http']!;
    expect(entry.type).toBe('http');
    const c = new Client({ name: 'readme', version: '1.0.0' });
    try {
      await c.connect(new StreamableHTTPClientTransport(new URL(local(entry.url!))));
      expect((await call(c, 'list_services')).value.services.length).toBeGreaterThan(0);
    } finally {
      await c.close();
    }
  });
});
