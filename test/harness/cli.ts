// The CLI run in-process (src/cli/main.ts run()), its stdout parsed; and one /v1/query call.
import { run } from '../../src/cli/main.js';
import { clientFor, queryRows } from '../helpers/client.js';

/** Runs `tds args`: exit code, stdout parsed as JSON (null when empty), stderr as lines. */
export async function cli(args: string[], env: Record<string, string> = {}, now?: () => number): Promise<{ code: number; out: any; err: string[] }> {
  let out = '';
  let err = '';
  const code = await run(args, { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) }, env, ...(now ? { now } : {}) });
  return { code, out: out ? JSON.parse(out) : null, err: err.split('\n').filter(Boolean) };
}

/** The rows of one statement through POST /v1/query (must answer 200). */
export function rows(base: string, sql: string): Promise<Record<string, unknown>[]> {
  return queryRows(clientFor(base), sql);
}

/** A literal bound on `timestamp` that holds every test's data (the query guard wants one). */
export const ALL_TIME = "timestamp >= TIMESTAMP '2000-01-01' AND timestamp < TIMESTAMP '2100-01-01'";
