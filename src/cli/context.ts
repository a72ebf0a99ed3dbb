// What every command of `tds` shares: its input and output, the parsed command line and the server
// it talks to, the typed client, and the one way results and errors are printed (indented JSON).
import type { ParsedArgs } from './args.js';
import { apiClient, httpTransport, type ApiClient, type ErrorBody, type FetchFn, type Outcome } from '../client/api.js';

export const EXIT_OK = 0;
export const EXIT_ERROR = 1;
export const EXIT_USAGE = 2;

export const DEFAULT_URL = 'http://127.0.0.1:9999';

export interface Writer {
  write(chunk: string): unknown;
  /** A terminal: progress is drawn as a bar rather than written as JSON lines. */
  isTTY?: boolean;
}

export interface CliIo {
  stdout: Writer;
  stderr: Writer;
  env: Record<string, string | undefined>;
  /** Where `query` reads its SQL when neither an argument nor --file is given. */
  stdin?: AsyncIterable<string | Uint8Array> | string;
  /** Injected for tests; defaults to the global fetch (undici). */
  fetch?: FetchFn;
  /** Injected for tests; defaults to Date.now. */
  now?: () => number;
}

export interface Ctx {
  io: CliIo;
  args: ParsedArgs;
  baseUrl: string;
  apiKey: string | undefined;
  timeoutMs: number;
  /** Whether the time limit was given (--timeout-ms or SVC_CLI_TIMEOUT_MS) rather than the default. */
  timeoutGiven: boolean;
}

export function print(io: CliIo, value: unknown): void {
  io.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

export function fail(io: CliIo, body: ErrorBody, code: number): number {
  print(io, body);
  return code;
}

export function clientOf(ctx: Ctx): ApiClient {
  return apiClient(httpTransport({ baseUrl: ctx.baseUrl, apiKey: ctx.apiKey, timeoutMs: ctx.timeoutMs, fetchFn: ctx.io.fetch }));
}

export function finish(ctx: Ctx, out: Outcome<unknown>): number {
  if (out.ok) {
    print(ctx.io, out.body);
    return EXIT_OK;
  }
  return fail(ctx.io, out.body, out.body.error.code === 'USAGE' ? EXIT_USAGE : EXIT_ERROR);
}

/** The admin endpoints take the instance admin token, not a tenant key. */
export function asAdmin(ctx: Ctx): Ctx {
  const token = ctx.io.env.SVC_ADMIN_TOKEN;
  return token ? { ...ctx, apiKey: token } : ctx;
}
