// Argument parsing for `tds`: `tds [global options] <command> [options] [arguments]`. Global options
// may also follow the command. `--opt value` and `--opt=value` both work; `--` ends the options.
import { API, type OperationId } from '../api/endpoints.js';

/** An operation's method and path, as the help names it. */
const at = (op: OperationId) => `${API[op].method} ${API[op].path}`;

export interface OptionSpec {
  readonly name: string; // without the leading dashes
  readonly value?: string; // placeholder for options that take a value; absent for flags
  readonly repeatable?: boolean;
  readonly description: string;
  readonly default?: string;
}

export interface CommandSpec {
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
  readonly options: readonly OptionSpec[];
  /** Positional arguments: none, or a description of what they are. */
  readonly positional?: string;
  readonly details?: readonly string[];
}

export const GLOBAL_OPTIONS: readonly OptionSpec[] = [
  { name: 'url', value: 'URL', description: 'base URL of the server (env SVC_URL)', default: 'http://127.0.0.1:9999' },
  { name: 'api-key', value: 'KEY', description: 'API key sent as `Authorization: Bearer KEY` (env SVC_API_KEY)' },
  { name: 'timeout-ms', value: 'MS', description: 'request time limit in milliseconds (env SVC_CLI_TIMEOUT_MS)', default: '30000' },
  { name: 'help', description: 'print this command\'s help as JSON' },
];

const TIME_OPTIONS: readonly OptionSpec[] = [
  { name: 'from-ts', value: 'TS', description: 'window start: microseconds since the Unix epoch (16 digits) or an ISO-8601 timestamp' },
  { name: 'to-ts', value: 'TS', description: 'window end: microseconds since the Unix epoch (16 digits) or an ISO-8601 timestamp' },
  { name: 'last', value: 'DURATION', description: 'the window is the last DURATION until now (e.g. 30m, 2h, 90s, 1d); instead of --from-ts/--to-ts' },
];

const DIAGNOSE_OPTIONS: readonly OptionSpec[] = [
  { name: 'service', value: 'NAME', repeatable: true, description: 'service to diagnose (1 to 10; repeat the option, or give names as arguments)' },
  ...TIME_OPTIONS,
  {
    name: 'detail',
    value: 'full|findings',
    description: '`findings`: the compact view per service (findings, anomalous operations, coverage, events, and what was left out with the SQL or call that fetches it); `full`: the whole block',
    default: 'full',
  },
  { name: 'max-bytes', value: 'N', description: 'with --detail findings: the most bytes of JSON the answer may take (the lowest-ranked entries are dropped first)' },
  { name: 'baseline-from-ts', value: 'TS', description: 'start of a stretch known to be good (before a deploy, the same hour yesterday), with --baseline-to-ts: the baseline of every comparison' },
  { name: 'baseline-to-ts', value: 'TS', description: 'end of that stretch, at or before the window\'s start' },
];

/** Requests `tds replay` keeps in flight unless --concurrency says otherwise. */
export const REPLAY_CONCURRENCY = 16;

export const COMMANDS: readonly CommandSpec[] = [
  {
    name: 'anomalies',
    summary: `ranked worsening shifts (${at('listAnomalies')})`,
    usage: 'tds anomalies [--service NAME] [--from-ts TS] [--to-ts TS | --last DURATION]',
    options: [{ name: 'service', value: 'NAME', description: 'restrict to one service' }, ...TIME_OPTIONS],
    details: ['The window defaults to the last hour; --to-ts defaults to now, --from-ts to one hour before --to-ts.'],
  },
  {
    name: 'diagnose',
    summary: `triage per service (${at('diagnose')})`,
    usage: 'tds diagnose --service NAME [--service NAME ...] [--from-ts TS] [--to-ts TS] [--last DURATION] [--baseline-from-ts TS --baseline-to-ts TS]',
    options: DIAGNOSE_OPTIONS,
    positional: 'service names (same as --service)',
    details: [
      'Without timestamps the server uses the last 15 minutes; --from-ts alone ends the window now.',
      'The budget of --max-bytes counts the answer as the server sends it (compact JSON); printed indented, it takes more.',
    ],
  },
  {
    name: 'investigate',
    summary: `alias of diagnose (the capability's earlier name; posts to ${API.diagnose.path})`,
    usage: 'tds investigate --service NAME [--service NAME ...] [--from-ts TS] [--to-ts TS] [--last DURATION]',
    options: DIAGNOSE_OPTIONS,
    positional: 'service names (same as --service)',
  },
  {
    name: 'query',
    summary: `run one read-only SELECT (${at('runQuery')})`,
    usage: 'tds query [SQL] [--file FILE] [--full-scan]',
    options: [
      { name: 'file', value: 'FILE', description: 'read the statement from FILE (`-` for stdin)' },
      { name: 'full-scan', description: 'send the statement even without a literal bound on `timestamp`, or when it cannot be checked' },
    ],
    positional: 'the SQL statement (when absent and no --file: read from stdin)',
    details: [
      'Before sending, every table with a `timestamp` column that a SELECT reads (subqueries and joins included, each on its own) must be bounded in that SELECT\'s WHERE or JOIN ON by a comparison of `timestamp` with a literal, e.g. timestamp >= TIMESTAMP \'2025-01-01 00:00:00\'.',
      'now()-based bounds do not count: they are evaluated per row and read every file.',
      'Statements the client-side parser cannot read are refused (UNCHECKABLE) unless --full-scan is given.',
    ],
  },
  { name: 'status', summary: `instance status (${at('getAdminStatus')}; sends SVC_ADMIN_TOKEN when set)`, usage: 'tds status', options: [] },
  {
    name: 'admin',
    summary: 'hosted variant (SVC_AUTH=keys): tenants and keys, authenticated by SVC_ADMIN_TOKEN from the environment',
    usage: 'tds admin tenant create|deactivate ID | tds admin tenant move ID [--to INSTANCE] | tds admin key create TENANT | tds admin key revoke SHORT_TOKEN',
    options: [{ name: 'to', value: 'INSTANCE', description: '`tenant move`: the instance id to move the tenant to (default: the least-loaded other live instance)' }],
    positional: 'tenant create ID, tenant deactivate ID, tenant move ID, key create TENANT, or key revoke SHORT_TOKEN (a prefix of the key hash, 8-64 hex)',
    details: [
      '`key create` prints the key once, with its short_token; only its SHA-256 hash is kept by the server.',
      '`tenant move` needs several instances on one PostgreSQL control plane and one shared SVC_DATA_DIR: the owner drains the tenant, closes its store and hands it over.',
    ],
  },
  {
    name: 'replay',
    summary: 'send recorded telemetry through the normal ingest path (OTLP/HTTP), or load a `tds snapshot` directory',
    usage: 'tds replay FILE|DIR ... [--shift-to now|US|none] [--rate max|N | --speed N] [--service-prefix P] [--otlp-url URL]',
    options: [
      { name: 'shift-to', value: 'now|US|none', description: "move every timestamp by one constant so the recording's last timestamp lands at now, at US (µs or ISO-8601), or leave them (none)", default: 'none' },
      { name: 'rate', value: 'max|N', description: 'max: as fast as the server acknowledges; N: at most N records a second', default: 'max' },
      { name: 'speed', value: 'N', description: "N× real time: requests are paced by the recording's own timestamps (instead of --rate)" },
      { name: 'service-prefix', value: 'P', description: 'prepend P to every service name, to keep cases apart in one store' },
      { name: 'otlp-url', value: 'URL', description: 'the OTLP/HTTP receiver (env SVC_OTLP_URL); default: the host of --url on port 4318' },
      { name: 'concurrency', value: 'N', description: 'requests in flight at once', default: String(REPLAY_CONCURRENCY) },
      { name: 'signal', value: 'traces|logs|metrics|profiles', description: 'the signal of protobuf files whose name and content do not tell it' },
    ],
    positional: 'files or directories (read recursively, in name order): OTLP JSON lines as the Collector file exporter writes them (.json, .jsonl, .ndjson, optionally .gz), OTLP protobuf (one export request per file, or length-delimited), or a `tds snapshot` directory',
    details: [
      'Progress goes to stderr: a bar on a terminal, JSON lines otherwise. The result on stdout counts the records sent, acknowledged and rejected (with the reasons), and every malformed line or file with its file and line number; a malformed line is skipped, never stops the replay.',
      'A refused request (429, 503) is sent again after the delay the server asks for; a record counts as acknowledged only once the server committed it.',
      'A snapshot directory (it holds manifest.json) is restored as `tds restore` does.',
    ],
  },
  {
    name: 'detect',
    summary: `run detection now (${at('detectNow')}; sends SVC_ADMIN_TOKEN when set)`,
    usage: 'tds detect [--wait] [--until-idle] [--as-of TS] [--tenant ID]',
    options: [
      { name: 'wait', description: 'first wait until the server has no ingest in flight (so data still being sent is taken in)' },
      { name: 'until-idle', description: 'repeat the pass until one closes nothing' },
      { name: 'as-of', value: 'TS', description: 'close only the buckets that end by TS and stamp the rows with it (µs or ISO-8601): the same recording then gives the same rows in any run' },
      { name: 'tenant', value: 'ID', description: 'SVC_AUTH=keys: the tenant whose store to detect on' },
    ],
    details: ['Closes every bucket that has received data, whatever SVC_DETECT_GRACE_S, and answers what the pass closed and wrote.'],
  },
  {
    name: 'snapshot',
    summary: `write a window of every table as Parquet, with a manifest (${at('snapshot')})`,
    usage: 'tds snapshot (--from-ts TS --to-ts TS | --last DURATION) [--service NAME ... | --services A,B] DIR',
    options: [
      { name: 'from-ts', value: 'TS', description: 'window start (µs or ISO-8601), inclusive' },
      { name: 'to-ts', value: 'TS', description: 'window end (µs or ISO-8601), exclusive' },
      { name: 'last', value: 'DURATION', description: 'the window is the last DURATION until now (e.g. 3h); instead of --from-ts/--to-ts' },
      { name: 'service', value: 'NAME', repeatable: true, description: 'only these services (repeat the option)' },
      { name: 'services', value: 'A,B', description: 'only these services, comma-separated (with --service, both lists count)' },
    ],
    positional: 'the directory to write (created; it must be empty if it exists)',
    details: ['One zstd Parquet file per table (DuckDB\'s writer) and manifest.json: version, schema, window, row counts and SHA-256 checksums. ClickHouse, Spark, Trino and DuckDB read the files as they are.'],
  },
  {
    name: 'restore',
    summary: `load a \`tds snapshot\` directory into the server's store (${at('restore')})`,
    usage: 'tds restore DIR',
    options: [],
    positional: 'the snapshot directory (it holds manifest.json)',
    details: ['Checksums are checked before anything is sent. Rows the store holds already are not stored twice; template ids and anomaly rows survive (a template id the store uses for another template is given a new one).'],
  },
  {
    name: 'mcp',
    summary: 'serve the API as Model Context Protocol tools over stdio, for agents (Claude Code, Cursor, any MCP client)',
    usage: 'tds mcp',
    options: [],
    details: [
      'Speaks MCP (JSON-RPC) on stdin/stdout until stdin closes; calls the server at --url / SVC_URL with --api-key / SVC_API_KEY.',
      'Tools: list_services, get_anomalies, diagnose, query, get_trace, list_alerts; resource tds://schema/tables; prompt triage.',
      `The same tools are served over Streamable HTTP at ${at('mcp')} on the API port.`,
    ],
  },
  {
    name: 'healthcheck',
    summary: 'exit 0 only when the server is ready (GET /healthz answers 200)',
    usage: 'tds healthcheck',
    options: [],
  },
  {
    name: 'fetch-extensions',
    summary: 'offline check that every engine part is present and loadable (DuckDB parquet/json/icu, the WASM modules); downloads nothing',
    usage: 'tds fetch-extensions',
    options: [],
  },
];

export class UsageError extends Error {
  constructor(message: string, readonly hint?: string) {
    super(message);
  }
}

export interface ParsedArgs {
  command: CommandSpec | null;
  /** Option values by name; flags are `true`, repeatable options are arrays. */
  options: Map<string, string[] | true>;
  positional: string[];
  help: boolean;
}

export function findCommand(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name);
}

export function parseArgs(argv: readonly string[]): ParsedArgs {
  const options = new Map<string, string[] | true>();
  const positional: string[] = [];
  let command: CommandSpec | null = null;
  let help = false;
  let i = 0;
  let onlyPositional = false;

  const lookup = (name: string): OptionSpec | undefined =>
    GLOBAL_OPTIONS.find((o) => o.name === name) ?? command?.options.find((o) => o.name === name);

  while (i < argv.length) {
    const a = argv[i++]!;
    if (!onlyPositional && a === '--') { onlyPositional = true; continue; }
    if (!onlyPositional && (a === '-h' || a === '--help')) { help = true; continue; }
    if (!onlyPositional && a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = eq >= 0 ? a.slice(2, eq) : a.slice(2);
      const spec = lookup(name);
      if (!spec) {
        throw new UsageError(
          `unknown option --${name}${command ? ` for \`${command.name}\`` : ''}`,
          command ? `tds ${command.name} --help lists its options` : 'options of a command go after its name; tds --help lists the commands',
        );
      }
      if (spec.value === undefined) {
        if (eq >= 0) throw new UsageError(`--${name} takes no value`);
        options.set(name, true);
        continue;
      }
      let v: string;
      if (eq >= 0) v = a.slice(eq + 1);
      else {
        if (i >= argv.length) throw new UsageError(`--${name} needs a value (${spec.value})`);
        v = argv[i++]!;
      }
      const prev = options.get(name);
      if (prev !== undefined && !spec.repeatable) throw new UsageError(`--${name} given more than once`);
      options.set(name, Array.isArray(prev) ? [...prev, v] : [v]);
      continue;
    }
    if (!onlyPositional && a.startsWith('-') && a.length > 1 && !/^-\d/.test(a)) {
      throw new UsageError(`unknown option ${a}`, 'options are spelled --name; tds --help lists them');
    }
    if (command === null) {
      const c = findCommand(a);
      if (!c) throw new UsageError(`unknown command \`${a}\``, `commands: ${COMMANDS.map((x) => x.name).join(', ')}`);
      command = c;
      continue;
    }
    positional.push(a);
  }
  return { command, options, positional, help };
}

/** The single value of an option, or undefined. */
export function optValue(p: ParsedArgs, name: string): string | undefined {
  const v = p.options.get(name);
  return Array.isArray(v) ? v[v.length - 1] : undefined;
}

export function optValues(p: ParsedArgs, name: string): string[] {
  const v = p.options.get(name);
  return Array.isArray(v) ? v : [];
}

export function optFlag(p: ParsedArgs, name: string): boolean {
  return p.options.get(name) === true;
}

/**
 * A timestamp option in microseconds: an integer (must be microseconds: 16 digits; seconds,
 * milliseconds and nanoseconds are refused with a hint, as the server does) or an ISO-8601 string.
 */
export function parseTimestampUs(name: string, raw: string): number {
  const s = raw.trim();
  if (/^\d+$/.test(s)) {
    if (s.length !== 16) {
      const unit = s.length <= 11 ? 'seconds' : s.length <= 14 ? 'milliseconds' : s.length >= 18 ? 'nanoseconds' : 'an unknown unit';
      throw new UsageError(
        `--${name} ${s} looks like ${unit}, not microseconds`,
        'timestamps are microseconds since the Unix epoch (16 digits), e.g. ' + String(Date.now() * 1000) + ', or an ISO-8601 string',
      );
    }
    return Number(s);
  }
  const ms = Date.parse(s);
  if (!Number.isFinite(ms)) {
    throw new UsageError(`--${name} ${JSON.stringify(raw)} is not a timestamp`, 'give microseconds since the Unix epoch (16 digits) or an ISO-8601 string such as 2025-01-01T00:00:00Z');
  }
  return ms * 1000;
}

const UNIT_US: Record<string, number> = { s: 1e6, m: 60e6, h: 3600e6, d: 86400e6 };

/** `--last 30m` → microseconds (s, m, h, d; whole or decimal numbers). */
export function parseDurationUs(name: string, raw: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([smhd])$/.exec(raw.trim());
  const us = m ? Math.round(Number(m[1]) * UNIT_US[m[2]!]!) : NaN;
  if (!(us > 0)) throw new UsageError(`--${name} ${JSON.stringify(raw)} is not a duration`, 'give a number and a unit: 90s, 30m, 2h or 1d');
  return us;
}

export function helpFor(cmd: CommandSpec | null): unknown {
  const opt = (o: OptionSpec) => ({
    option: `--${o.name}${o.value ? ` ${o.value}` : ''}`,
    description: o.description,
    ...(o.default !== undefined ? { default: o.default } : {}),
    ...(o.repeatable ? { repeatable: true } : {}),
  });
  if (!cmd) {
    return {
      usage: 'tds [global options] <command> [options] [arguments]',
      commands: COMMANDS.map((c) => ({ command: c.name, summary: c.summary })),
      global_options: GLOBAL_OPTIONS.map(opt),
      output: 'indented JSON on stdout, errors included: {"error": {"code", "message", "hint"}}',
      exit_codes: { '0': 'success', '1': 'server or request error (including a refused query)', '2': 'usage error' },
    };
  }
  return {
    command: cmd.name,
    summary: cmd.summary,
    usage: cmd.usage,
    ...(cmd.positional ? { arguments: cmd.positional } : {}),
    options: cmd.options.map(opt),
    global_options: GLOBAL_OPTIONS.map(opt),
    ...(cmd.details ? { details: cmd.details } : {}),
  };
}
