// `tds mcp`: the MCP server on stdin/stdout, its tools calling a running service over HTTP.
import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createMcpServer } from './server.js';
import { httpApi, type ApiTarget } from './api.js';

/** Serves until stdin ends (the client went away); answers still in flight are written before exit. */
export async function serveStdio(target: ApiTarget, stdin: Readable = process.stdin, stdout: Writable = process.stdout): Promise<void> {
  const server = createMcpServer(httpApi(target));
  const ended = new Promise<void>((resolve) => {
    stdin.once('end', resolve);
    stdin.once('close', resolve);
  });
  await server.connect(new StdioServerTransport(stdin, stdout));
  await ended;
}
