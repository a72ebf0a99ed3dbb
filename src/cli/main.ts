#!/usr/bin/env node
// `tds`: the command-line client of the Telemetry Diagnosis Service. Output is always indented JSON
// on stdout, errors included ({"error": {"code", "message", "hint"}}, the server's error shape).
// Exit codes: 0 success; 1 server or request error (including a query the client refused to send);
// 2 usage error. `run()` is importable and testable without spawning a process.
import { readFile } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  UsageError,
  helpFor,
  parseDurationUs,
  optFlag,
  optValue,
  optValues,
  parseArgs,
  parseTimestampUs,
  type ParsedArgs,
} from './args.js';
import { anomalyWindow } from '../client/api.js';
import { asAdmin, clientOf, DEFAULT_URL, EXIT_ERROR, EXIT_OK, EXIT_USAGE, fail, finish, print, type CliIo, type Ctx } from './context.js';
import { HARNESS_HANDLERS } from './harness.js';
import type { DiagnoseBody } from '../api/schemas.js';
import { errorBody } from '../core/errors.js';
// The server's own limit, checked here too so that too many names is a usage error (exit 2) before sending.
import { MAX_SERVICES } from '../diagnose/request.js';

export { EXIT_OK, EXIT_ERROR, EXIT_USAGE, DEFAULT_URL, type CliIo, type Writer } from './context.js';

const DEFAULT_TIMEOUT_MS = 30_000;
const HEALTHCHECK_TIMEOUT_MS = 5_000;

async function readStdin(stdin: CliIo['stdin']): Promise<string> {
  if (stdin === undefined) return '';
  if (typeof stdin === 'string') return stdin;
  const chunks: Buffer[] = [];
  for await (const c of stdin) chunks.push(typeof c === 'string' ? Buffer.from(c) : Buffer.from(c));
  return Buffer.concat(chunks).toString('utf8');
}

function noPositional(args: ParsedArgs): void {
  if (args.positional.length) throw new UsageError(`unexpected argument ${JSON.stringify(args.positional[0])}`, `tds ${args.command!.name} --help`);
}

/** `--last DURATION` as [now − duration, now], refused beside --from-ts/--to-ts; undefined without it. */
function lastWindow(ctx: Ctx): [number, number] | undefined {
  const last = optValue(ctx.args, 'last');
  if (last === undefined) return undefined;
  if (optValue(ctx.args, 'from-ts') !== undefined || optValue(ctx.args, 'to-ts') !== undefined) throw new UsageError('--last cannot be combined with --from-ts or --to-ts', 'give either --last DURATION or the timestamps');
  const now = (ctx.io.now ?? Date.now)() * 1000;
  return [now - parseDurationUs('last', last), now];
}

async function cmdAnomalies(ctx: Ctx): Promise<number> {
  noPositional(ctx.args);
  const now = (ctx.io.now ?? Date.now)() * 1000;
  const fromRaw = optValue(ctx.args, 'from-ts');
  const toRaw = optValue(ctx.args, 'to-ts');
  const last = lastWindow(ctx);
  const to = last ? last[1] : toRaw !== undefined ? parseTimestampUs('to-ts', toRaw) : undefined;
  const from = last ? last[0] : fromRaw !== undefined ? parseTimestampUs('from-ts', fromRaw) : undefined;
  // The service requires both bounds (spec), so the client's default window fills them in.
  const w = anomalyWindow(from, to, now);
  if (w.to_ts < w.from_ts) throw new UsageError('--to-ts is before --from-ts');
  return finish(ctx, await clientOf(ctx).listAnomalies({ service: optValue(ctx.args, 'service'), ...w }));
}

async function cmdDiagnose(ctx: Ctx): Promise<number> {
  const services = [...optValues(ctx.args, 'service'), ...ctx.args.positional].filter((s) => s !== '');
  const distinct = [...new Set(services)];
  if (distinct.length === 0) throw new UsageError('no service given', `tds ${ctx.args.command!.name} --service NAME (names come from GET /v1/services)`);
  if (distinct.length > MAX_SERVICES) throw new UsageError(`${distinct.length} services given; at most ${MAX_SERVICES} per call`, 'split them over several calls');
  const fromRaw = optValue(ctx.args, 'from-ts');
  const toRaw = optValue(ctx.args, 'to-ts');
  if (toRaw !== undefined && fromRaw === undefined) throw new UsageError('--to-ts needs --from-ts', 'give both, only --from-ts (the window then ends now), or neither (the last 15 minutes)');
  const body: DiagnoseBody = { services: distinct };
  const last = lastWindow(ctx);
  if (last) [body.from_ts, body.to_ts] = last;
  if (fromRaw !== undefined) body.from_ts = parseTimestampUs('from-ts', fromRaw);
  if (toRaw !== undefined) body.to_ts = parseTimestampUs('to-ts', toRaw);
  if (body.to_ts !== undefined && (body.to_ts as number) <= (body.from_ts as number)) throw new UsageError('--to-ts must be after --from-ts');
  const baseFrom = optValue(ctx.args, 'baseline-from-ts');
  const baseTo = optValue(ctx.args, 'baseline-to-ts');
  if ((baseFrom === undefined) !== (baseTo === undefined)) throw new UsageError('--baseline-from-ts and --baseline-to-ts come together', 'give both to name a good stretch, or neither');
  if (baseFrom !== undefined) body.baseline_from_ts = parseTimestampUs('baseline-from-ts', baseFrom);
  if (baseTo !== undefined) body.baseline_to_ts = parseTimestampUs('baseline-to-ts', baseTo);
  // The server checks the values and answers with a hint; a budget that is not a number is refused here.
  const detail = optValue(ctx.args, 'detail');
  if (detail !== undefined) body.detail = detail as DiagnoseBody['detail'];
  const maxBytes = optValue(ctx.args, 'max-bytes');
  if (maxBytes !== undefined) {
    if (!/^\d+$/.test(maxBytes)) throw new UsageError(`--max-bytes must be a whole number of bytes, got ${JSON.stringify(maxBytes)}`, 'e.g. --detail findings --max-bytes 32768');
    body.max_bytes = Number(maxBytes);
  }
  return finish(ctx, await clientOf(ctx).diagnose({ body }));
}

async function cmdQuery(ctx: Ctx): Promise<number> {
  const file = optValue(ctx.args, 'file');
  if (file !== undefined && ctx.args.positional.length) throw new UsageError('give the SQL either as an argument or with --file, not both');
  let sql: string;
  if (file === '-') sql = await readStdin(ctx.io.stdin);
  else if (file !== undefined) {
    try {
      sql = await readFile(file, 'utf8');
    } catch (e) {
      throw new UsageError(`cannot read --file ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  } else if (ctx.args.positional.length) sql = ctx.args.positional.join(' ');
  else sql = await readStdin(ctx.io.stdin);
  if (sql.trim() === '') throw new UsageError('no SQL statement given', 'tds query "SELECT ..." | tds query --file F | echo "SELECT ..." | tds query');

  if (!optFlag(ctx.args, 'full-scan')) {
    const { checkFullScan } = await import('./full-scan.js'); // loaded only here: the parser is large
    const check = checkFullScan(sql);
    if (check.status === 'unparseable') {
      ctx.io.stderr.write(`tds: the full-scan check could not run: the client-side parser cannot read this statement (${check.error})\n`);
      return fail(
        ctx.io,
        errorBody('UNCHECKABLE', `the statement could not be checked for an unbounded timestamp scan: the client-side parser (node-sql-parser, postgresql dialect) cannot read it: ${check.error}`, 'pass --full-scan to send it unchecked (the server still validates it)'),
        EXIT_ERROR,
      );
    }
    if (check.status === 'unbounded') {
      const refs = check.unbounded.map((u) => (u.alias ? `${u.table} AS ${u.alias}` : u.table));
      const nowBased = check.unbounded.some((u) => u.now_based);
      const tzAware = check.unbounded.some((u) => u.tz_aware);
      return fail(
        ctx.io,
        errorBody(
          'FULL_SCAN_REFUSED',
          `refused before sending: ${refs.join(', ')} ${refs.length > 1 ? 'are' : 'is'} read without a literal bound on \`timestamp\`${nowBased ? ' (a now()-based bound does not count)' : ''}${tzAware ? ' (a time-zone-aware bound does not count: the column would be cast per row)' : ''}`,
          'bound `timestamp` with a literal in the WHERE (or JOIN ON) of the same SELECT, e.g. timestamp >= TIMESTAMP \'2025-01-01 00:00:00\' AND timestamp < TIMESTAMP \'2025-01-01 01:00:00\' (UTC, no time zone); literal bounds let whole files be skipped, while bounds built from now() are evaluated per row and read every file; pass --full-scan to send it anyway',
        ),
        EXIT_ERROR,
      );
    }
  }
  return finish(ctx, await clientOf(ctx).runQuery({ body: sql }));
}

async function cmdStatus(ctx: Ctx): Promise<number> {
  noPositional(ctx.args);
  return finish(ctx, await clientOf(asAdmin(ctx)).getAdminStatus());
}

async function cmdAdmin(ctx: Ctx): Promise<number> {
  const [what, verb, arg, ...rest] = ctx.args.positional;
  const usage = 'tds admin tenant create|deactivate ID | tds admin tenant move ID [--to INSTANCE] | tds admin key create TENANT | tds admin key revoke SHORT_TOKEN';
  if (!arg || rest.length) throw new UsageError(`expected ${usage}`, 'tds admin --help');
  if (!ctx.io.env.SVC_ADMIN_TOKEN) throw new UsageError('SVC_ADMIN_TOKEN is not set', 'export SVC_ADMIN_TOKEN with the token the server was started with');
  const admin = clientOf(asAdmin(ctx));
  switch (`${what} ${verb}`) {
    case 'tenant create':
      return finish(ctx, await admin.createTenant({ body: { id: arg } }));
    case 'tenant deactivate':
      return finish(ctx, await admin.deactivateTenant({ id: arg }));
    case 'tenant move': {
      const to = optValue(ctx.args, 'to');
      return finish(ctx, await admin.moveTenant({ id: arg, body: to === undefined ? {} : { to } }));
    }
    case 'key create':
      return finish(ctx, await admin.issueKey({ id: arg }));
    case 'key revoke':
      return finish(ctx, await admin.revokeKey({ short_token: arg }));
    default:
      throw new UsageError(`unknown admin command \`${what} ${verb}\``, usage);
  }
}

async function cmdHealthcheck(ctx: Ctx): Promise<number> {
  noPositional(ctx.args);
  const explicit = optValue(ctx.args, 'timeout-ms') ?? ctx.io.env.SVC_CLI_TIMEOUT_MS;
  const out = await clientOf(ctx).getHealth({}, { timeoutMs: explicit ? ctx.timeoutMs : HEALTHCHECK_TIMEOUT_MS });
  if (out.ok && out.status === 200) {
    print(ctx.io, { ready: true, status: 200, url: ctx.baseUrl, body: out.body });
    return EXIT_OK;
  }
  if (out.ok) {
    return fail(ctx.io, errorBody('NOT_READY', `GET /healthz answered ${out.status}, not 200`, 'the server is not ready yet'), EXIT_ERROR);
  }
  if (out.status !== null && out.status !== 404) {
    const e = out.body.error;
    return fail(ctx.io, errorBody(out.status === 503 ? 'NOT_READY' : e.code, `GET /healthz answered ${out.status}: ${e.message}`, e.hint || 'the server is not ready yet; retry shortly'), EXIT_ERROR);
  }
  return fail(ctx.io, out.body, EXIT_ERROR);
}

/** `tds mcp`: stdout carries the protocol from here on, so nothing else may print to it. */
async function cmdMcp(ctx: Ctx): Promise<number> {
  noPositional(ctx.args);
  const { serveStdio } = await import('../mcp/stdio.js'); // loaded only here: the SDK is large
  await serveStdio({ baseUrl: ctx.baseUrl, apiKey: ctx.apiKey, timeoutMs: ctx.timeoutMs });
  return EXIT_OK;
}

async function cmdFetchExtensions(ctx: Ctx): Promise<number> {
  noPositional(ctx.args);
  const { checkEngine } = await import('./extensions.js');
  const report = await checkEngine();
  print(ctx.io, report);
  return report.ok ? EXIT_OK : EXIT_ERROR;
}

const HANDLERS: Record<string, (ctx: Ctx) => Promise<number>> = {
  anomalies: cmdAnomalies,
  diagnose: cmdDiagnose,
  investigate: cmdDiagnose,
  query: cmdQuery,
  status: cmdStatus,
  admin: cmdAdmin,
  healthcheck: cmdHealthcheck,
  'fetch-extensions': cmdFetchExtensions,
  mcp: cmdMcp,
  ...HARNESS_HANDLERS,
};

/** Runs the CLI with `argv` (without node and the script path); resolves to the exit code. */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    const args = parseArgs(argv);
    if (args.help) {
      print(io, helpFor(args.command));
      return EXIT_OK;
    }
    if (!args.command) throw new UsageError('no command given', 'tds --help lists the commands');
    const baseUrl = optValue(args, 'url') ?? io.env.SVC_URL ?? DEFAULT_URL;
    try {
      const u = new URL(baseUrl);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
    } catch {
      throw new UsageError(`invalid server URL ${JSON.stringify(baseUrl)}`, 'pass --url http://host:port or set SVC_URL');
    }
    const timeoutRaw = optValue(args, 'timeout-ms') ?? io.env.SVC_CLI_TIMEOUT_MS;
    const timeoutMs = timeoutRaw === undefined ? DEFAULT_TIMEOUT_MS : Number(timeoutRaw);
    if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new UsageError(`invalid --timeout-ms ${JSON.stringify(timeoutRaw)}`, 'a positive whole number of milliseconds');
    const apiKey = optValue(args, 'api-key') ?? io.env.SVC_API_KEY;
    const ctx: Ctx = { io, args, baseUrl, apiKey: apiKey || undefined, timeoutMs, timeoutGiven: timeoutRaw !== undefined };
    return await HANDLERS[args.command.name]!(ctx);
  } catch (e) {
    if (e instanceof UsageError) return fail(io, errorBody('USAGE', e.message, e.hint ?? 'tds --help'), EXIT_USAGE);
    const err = e as Error;
    return fail(io, errorBody('INTERNAL', err?.message ?? String(e), 'this is a bug in the CLI; please report it with the command line'), EXIT_ERROR);
  }
}

function isMain(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  // `tds ... | head`: a closed pipe is not an error worth a stack trace.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
  const code = await run(process.argv.slice(2), {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    stdin: process.stdin.isTTY ? undefined : process.stdin,
  });
  // Let stdout drain before exiting (pipes are asynchronous).
  process.exitCode = code;
}
