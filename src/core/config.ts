// Configuration from the environment, validated before anything starts. Each setting is declared once
// here with its default and meaning; docs/configuration.md is generated from this list
// (`npm run docs:config`, core/settings-doc.ts), and a test fails when it is stale.
import { availableParallelism } from 'node:os';

export interface Config {
  dataDir: string;
  host: string;
  apiPort: number;
  otlpGrpcPort: number;
  otlpHttpPort: number;
  /** Largest accepted body after decompression, bytes (413 above). */
  maxBodyBytes: number;
  /** Largest snapshot archive POST /v1/restore takes, bytes (413 above). */
  restoreMaxBytes: number;
  /** Bytes received but not yet committed; above this, ingest answers 429 / UNAVAILABLE. 0 = derived from the memory budget (core/budget.ts). */
  maxInflightBytes: number;
  /** Longest estimated wait for an acknowledgement at which ingest is still admitted; 0 = no bound. */
  maxAckWaitMs: number;
  /** The process's memory budget, bytes; 0 = derived from the machine's memory (core/budget.ts). */
  memoryBudgetBytes: number;
  retentionHours: number;
  /** Longest a batch waits to be committed together with others (group commit). */
  flushIntervalMs: number;
  /** Decode worker threads. */
  workers: number;
  /** DuckDB's worker threads; 0 = the cores the decode workers leave, at least 1. */
  duckdbThreads: number;
  /** DuckDB's memory limit (e.g. `2GB`); empty = derived from the memory budget (core/budget.ts). */
  duckdbMemoryLimit: string;
  /** Rows a store's DuckDB instance commits before the store is closed and opened again; 0 = never, null = derived from the memory budget (core/budget.ts). */
  storeReopenRows: number | null;
  /** DuckDB connections loading ingest commits side by side. */
  duckdbLoaders: number;
  queryTimeoutMs: number;
  diagnoseTimeoutMs: number;
  diagnoseScanSpans: number;
  diagnoseLogSlowMs: number;
  /** Diagnoses running at once per tenant store; more wait for a turn. */
  diagnoseConcurrency: number;
  /** Diagnoses that may wait for a turn per tenant store; more are answered busy. */
  diagnoseQueue: number;
  queryRowCap: number;
  detectIntervalS: number;
  detectGraceS: number;
  /** Below this much free disk space, ingest answers 507. */
  minFreeDiskBytes: number;
  /** `open`: one tenant, nothing checked; `keys`: the hosted variant (tenant keys, one store per tenant). */
  auth: 'open' | 'keys';
  /** Bearer token of the admin endpoints in `keys` mode; empty disables them. */
  adminToken: string;
  /** PostgreSQL URL of the shared control plane; empty = the embedded one (a file under dataDir). */
  controlPlaneUrl: string;
  controlPlaneRefreshMs: number;
  /** A tenant's store is closed after this long without a request. */
  tenantIdleS: number;
  tenantMaxOpen: number;
  /** Ingest bytes a tenant may send per second (token bucket, one second of burst); 0 = no limit. */
  tenantIngestBytesPerS: number;
  /** Above this many bytes stored, the tenant's ingest answers 507; 0 = no limit. */
  tenantMaxStoredBytes: number;
  /** How the other instances reach this one's API (placement); empty = http://SVC_HOST:<API port>. */
  instanceUrl: string;
  /** This instance's stable name in the placement tables; empty = its instance URL. */
  instanceId: string;
  /** Shared secret that signs requests forwarded between instances; empty = SVC_ADMIN_TOKEN. */
  clusterSecret: string;
  /** How long a tenant's lease lasts without renewal (renewed every third of it). */
  leaseTtlMs: number;
  /** Longest a forwarded request may take, owner's answer included. */
  forwardTimeoutMs: number;
  /** Whether SVC_DATA_DIR is one volume every instance mounts (a tenant can change owner). */
  dataDirShared: boolean;
  /** glibc's MALLOC_ARENA_MAX and MALLOC_MMAP_THRESHOLD_ as documented; glibc reads them before the server runs (core/allocator.ts). */
  mallocArenaMax: number;
  mallocMmapThreshold: number;
}

interface Setting {
  readonly env: string;
  readonly key: keyof Config;
  readonly default: string;
  readonly doc: string;
  /** Never echoed in an error message (a token, or a URL that may carry a password). */
  readonly secret?: boolean;
  parse(raw: string): Config[keyof Config];
}

const int = (min: number, max: number) => (raw: string): number => {
  if (!/^\d+$/.test(raw.trim())) throw new Error(`must be a whole number from ${min} to ${max}`);
  const n = Number(raw);
  if (n < min || n > max) throw new Error(`must be from ${min} to ${max}`);
  return n;
};
const port = int(0, 65535);
/** A whole number, or empty for a value derived from others (read as null, where 0 has its own meaning). */
const intOrDerived = (min: number, max: number) => (raw: string): number | null => (raw.trim() === '' ? null : int(min, max)(raw));
/** The same, empty read as 0 (for settings where 0 is not a value). */
const intOrUnset = (min: number, max: number) => (raw: string): number => intOrDerived(min, max)(raw) ?? 0;
const str = (raw: string): string => raw;
const memory = (raw: string): string => {
  const v = raw.trim();
  if (v !== '' && !/^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i.test(v)) throw new Error('must be a size such as 512MB or 2GB, or empty');
  return v;
};
const MiB = 1024 * 1024;
const oneOf = <T extends string>(...values: T[]) => (raw: string): T => {
  if (!values.includes(raw as T)) throw new Error(`must be one of ${values.join(', ')}`);
  return raw as T;
};
const adminToken = (raw: string): string => {
  if (raw !== '' && raw.length < 16) throw new Error('must be at least 16 characters (or unset to disable the admin endpoints)');
  if (raw.startsWith('tds_')) throw new Error('must not look like a tenant key (`tds_` prefix)');
  return raw;
};
const clusterSecret = (raw: string): string => {
  if (raw !== '' && raw.length < 16) throw new Error('must be at least 16 characters (or unset to use SVC_ADMIN_TOKEN)');
  return raw;
};
const bool = (raw: string): boolean => {
  if (raw !== 'true' && raw !== 'false') throw new Error('must be true or false');
  return raw === 'true';
};
const httpUrl = (raw: string): string => {
  if (raw !== '' && !/^https?:\/\/[^/\s]+\/?$/.test(raw)) throw new Error('must be http://host:port (no path), or empty for http://SVC_HOST:<API port>');
  return raw.replace(/\/$/, '');
};
const postgresUrl = (raw: string): string => {
  if (raw !== '' && !/^postgres(ql)?:\/\//.test(raw)) throw new Error('must be a postgres:// or postgresql:// URL, or empty for the embedded control plane');
  return raw;
};

export const SETTINGS: readonly Setting[] = [
  { env: 'SVC_DATA_DIR', key: 'dataDir', default: './data', doc: 'where `lake.duckdb` and every other file of the service live', parse: str },
  { env: 'SVC_HOST', key: 'host', default: '127.0.0.1', doc: 'bind address of all three listeners (`0.0.0.0` to take telemetry from the network)', parse: str },
  { env: 'SVC_API_PORT', key: 'apiPort', default: '9999', doc: 'JSON/SQL API and profile ingest; `0` = any free port', parse: port },
  { env: 'SVC_OTLP_GRPC_PORT', key: 'otlpGrpcPort', default: '4317', doc: 'OTLP/gRPC; `0` = any free port', parse: port },
  { env: 'SVC_OTLP_HTTP_PORT', key: 'otlpHttpPort', default: '4318', doc: 'OTLP/HTTP; `0` = any free port', parse: port },
  { env: 'SVC_MAX_BODY_BYTES', key: 'maxBodyBytes', default: String(20 * MiB), doc: 'largest ingest body after decompression (413 above; OTLP recommends 20 MiB)', parse: int(1024, 1024 * MiB) },
  { env: 'SVC_RESTORE_MAX_BYTES', key: 'restoreMaxBytes', default: String(1024 * MiB), doc: 'largest snapshot archive `POST /v1/restore` (`tds restore`) takes (413 above); the archive is held in memory while it loads', parse: int(1024, 64 * 1024 * MiB) },
  { env: 'SVC_MEMORY_BUDGET', key: 'memoryBudgetBytes', default: '', doc: "the process's memory budget, bytes: unset `SVC_DUCKDB_MEMORY_LIMIT` is a quarter of it and unset `SVC_MAX_INFLIGHT_BYTES` an eighth, the rest is left to the event loop, decode workers and their buffers; unset = a quarter of the machine's memory, at most 2 GiB (so a server shares its machine by default)", parse: intOrUnset(64 * MiB, Number.MAX_SAFE_INTEGER) },
  { env: 'SVC_MAX_INFLIGHT_BYTES', key: 'maxInflightBytes', default: '', doc: 'received but not yet committed bytes; above it ingest answers 429 with Retry-After (gRPC UNAVAILABLE); unset = an eighth of `SVC_MEMORY_BUDGET` (256 MiB with a 2 GiB budget)', parse: intOrUnset(1024, 64 * 1024 * MiB) },
  { env: 'SVC_MAX_ACK_WAIT_MS', key: 'maxAckWaitMs', default: '1000', doc: 'ingest is refused (429 with Retry-After, gRPC UNAVAILABLE) when a request would wait longer than this for its acknowledgement, estimated from the bytes in flight and the rate of recent acknowledgements, once the oldest request in flight has waited half of it (while requests are refused at it, the limit narrows to keep the p99 of recent waits within 1.7 times it), so an accepted request is answered well before the 10 s after which OTel exporters send again; `0` = no bound but the bytes', parse: int(0, 600_000) },
  { env: 'SVC_RETENTION_HOURS', key: 'retentionHours', default: '72', doc: 'telemetry older than this is deleted', parse: int(1, 24 * 365 * 10) },
  // Chosen on bench:ingest at 32 senders: a shorter wait ends before a sender cohort's 16 batches are
  // decoded while both loaders keep the cores busy, and many rows then go through the WAL in small
  // commits (store/writer.ts).
  { env: 'SVC_FLUSH_INTERVAL_MS', key: 'flushIntervalMs', default: '150', doc: 'longest a free loader waits for batches still being decoded before it commits fewer rows than a row group (8,192)', parse: int(0, 10_000) },
  { env: 'SVC_WORKERS', key: 'workers', default: '2', doc: 'decode worker threads', parse: int(1, 64) },
  { env: 'SVC_DUCKDB_THREADS', key: 'duckdbThreads', default: '0', doc: 'DuckDB worker threads; `0` = the cores `SVC_WORKERS` leaves, at least 1 (on 2 cores: 1, on which a small ingest commit costs DuckDB less CPU than on 2)', parse: int(0, 256) },
  { env: 'SVC_DUCKDB_MEMORY_LIMIT', key: 'duckdbMemoryLimit', default: '', doc: "DuckDB's memory limit, e.g. `2GB` (its buffer cache, ingest loads and queries; beyond it DuckDB spills to `SVC_DATA_DIR` or fails the query); unset = a quarter of `SVC_MEMORY_BUDGET` (`keys` mode: three eighths, shared by the open stores)", parse: memory },
  { env: 'SVC_STORE_REOPEN_ROWS', key: 'storeReopenRows', default: '', doc: "a store is closed and opened again (requests wait meanwhile) once its DuckDB instance has committed this many rows: DuckDB keeps about 11 bytes of metadata a row committed since it opened, outside its memory limit; unset = what keeps that within a sixteenth of `SVC_MEMORY_BUDGET` for each open store (11 M rows with a 2 GiB budget); `0` = never", parse: intOrDerived(0, Number.MAX_SAFE_INTEGER) },
  { env: 'SVC_DUCKDB_LOADERS', key: 'duckdbLoaders', default: '2', doc: 'DuckDB connections that load ingest commits side by side, each in its own transaction (on 2 cores, 2 load more spans/s than 1)', parse: int(1, 16) },
  { env: 'SVC_QUERY_TIMEOUT_MS', key: 'queryTimeoutMs', default: '10000', doc: '`/v1/query` time limit; a longer query is interrupted (400 INTERRUPT)', parse: int(100, 3_600_000) },
  { env: 'SVC_DIAGNOSE_TIMEOUT_MS', key: 'diagnoseTimeoutMs', default: '30000', doc: 'time limit of one `/v1/diagnose` call; past it its queries are interrupted and each service gets an entry in `errors`', parse: int(100, 3_600_000) },
  { env: 'SVC_DIAGNOSE_LOG_SLOW_MS', key: 'diagnoseLogSlowMs', default: '5000', doc: 'a diagnosis that takes at least this long, from its arrival, is logged (`slow diagnosis`, level info) with its slowest statements and the ms each ran; `0` = none', parse: int(0, 3_600_000) },
  { env: 'SVC_DIAGNOSE_SCAN_SPANS', key: 'diagnoseScanSpans', default: '2000000', doc: "spans of the window a diagnosis reads for its per-operation statistics, about: a window that holds more is read as evenly spread slices of it (about 15, the first part of each period on the time grid) and its counts are scaled up, so a diagnosis of a busy store costs about the same as of a quiet one; the block says so in `window_sampled`", parse: int(100, Number.MAX_SAFE_INTEGER) },
  { env: 'SVC_DIAGNOSE_CONCURRENCY', key: 'diagnoseConcurrency', default: '2', doc: 'diagnoses running at once per tenant store; more wait for a turn, first come first served (a call identical to one running or waiting shares its answer)', parse: int(1, 64) },
  { env: 'SVC_DIAGNOSE_QUEUE', key: 'diagnoseQueue', default: '8', doc: 'diagnoses that may wait for a turn per tenant store; a call that finds it full, that would wait so long that a run of the recent median length could not end within `SVC_DIAGNOSE_TIMEOUT_MS`, or that is not started within half of it, gets every service in `errors` as busy, with Retry-After (HTTP 200), and does not run', parse: int(0, 1024) },
  { env: 'SVC_QUERY_ROW_CAP', key: 'queryRowCap', default: '10000', doc: 'most rows `/v1/query` returns; more is a 400 ROW_CAP error', parse: int(1, 10_000_000) },
  { env: 'SVC_DETECT_INTERVAL_S', key: 'detectIntervalS', default: '300', doc: 'the longest wait between detection passes; a pass also runs as soon as each 5-minute bucket\'s grace has passed', parse: int(1, 86_400) },
  { env: 'SVC_DETECT_GRACE_S', key: 'detectGraceS', default: '30', doc: 'how long after its end a 5-minute bucket waits for late data before it is closed and detected (later data reopens it)', parse: int(0, 86_400) },
  { env: 'SVC_MIN_FREE_DISK_BYTES', key: 'minFreeDiskBytes', default: String(256 * MiB), doc: "below this much free space in the data directory (measured every second), ingest answers 507 until there is room again, without a restart; the margin covers the bytes in flight and DuckDB's own writes", parse: int(0, Number.MAX_SAFE_INTEGER) },
  { env: 'SVC_AUTH', key: 'auth', default: 'open', doc: '`open`: self-hosted, one tenant, no request is authenticated; `keys`: the hosted variant (a tenant key on every ingest and read path, one store per tenant, admin endpoints)', parse: oneOf('open', 'keys') },
  { env: 'SVC_ADMIN_TOKEN', key: 'adminToken', default: '', doc: '`keys` mode: bearer token of `/admin/*` (at least 16 characters); unset = admin endpoints disabled (403). The CLI sends it for `tds admin` and `tds status`', secret: true, parse: adminToken },
  { env: 'SVC_CONTROL_PLANE_URL', key: 'controlPlaneUrl', default: '', doc: '`keys` mode: `postgres://user:pass@host:port/db` of a control plane shared by several instances (tables created and migrated by the service); unset = embedded, `SVC_DATA_DIR/control-plane.json`, one instance', secret: true, parse: postgresUrl },
  { env: 'SVC_CONTROL_PLANE_REFRESH_MS', key: 'controlPlaneRefreshMs', default: '2000', doc: 'how often an instance checks the control plane for keys and tenants changed elsewhere: a key created or revoked on one instance works or is refused on the others within this bound', parse: int(100, 60_000) },
  { env: 'SVC_TENANT_IDLE_S', key: 'tenantIdleS', default: '900', doc: '`keys` mode: a tenant\'s store (its DuckDB file, detection and retention) is closed after this long without a request, and reopened by the next', parse: int(1, 86_400) },
  { env: 'SVC_TENANT_MAX_OPEN', key: 'tenantMaxOpen', default: '8', doc: "`keys` mode: tenant stores open at once on this instance; each runs DuckDB under this share of the budget's DuckDB part (unless `SVC_DUCKDB_MEMORY_LIMIT` is set), so the sum stays within `SVC_MEMORY_BUDGET`. Opening one more first closes the least recently used idle one; when every one is in use, 503 with Retry-After", parse: int(1, 1024) },
  { env: 'SVC_TENANT_INGEST_BYTES_PER_S', key: 'tenantIngestBytesPerS', default: String(32 * MiB), doc: '`keys` mode: ingest bytes per second per tenant (one second of burst, and always one body); above it 429 with Retry-After; `0` = no limit', parse: int(0, Number.MAX_SAFE_INTEGER) },
  { env: 'SVC_TENANT_MAX_STORED_BYTES', key: 'tenantMaxStoredBytes', default: String(10 * 1024 * MiB), doc: '`keys` mode: a tenant whose store holds more than this answers 507 to its own ingest (others are unaffected) until retention frees room; `0` = no limit', parse: int(0, Number.MAX_SAFE_INTEGER) },
  { env: 'SVC_INSTANCE_URL', key: 'instanceUrl', default: '', doc: 'with `SVC_CONTROL_PLANE_URL`: `http://host:port` at which the other instances reach this instance\'s API port (its OTLP/HTTP listener is reached on the same host at its own port); unset = `http://SVC_HOST:<API port>`', parse: httpUrl },
  { env: 'SVC_INSTANCE_ID', key: 'instanceId', default: '', doc: 'with `SVC_CONTROL_PLANE_URL`: this instance\'s stable name in the placement tables; with local disks it must survive a restart (the tenants it owns wait for it); unset = the instance URL', parse: str },
  { env: 'SVC_CLUSTER_SECRET', key: 'clusterSecret', default: '', doc: 'with `SVC_CONTROL_PLANE_URL`: shared secret (at least 16 characters, the same on every instance) that signs requests forwarded to a tenant\'s owner; unset = `SVC_ADMIN_TOKEN`', secret: true, parse: clusterSecret },
  { env: 'SVC_LEASE_TTL_MS', key: 'leaseTtlMs', default: '10000', doc: 'with `SVC_CONTROL_PLANE_URL`: a tenant\'s lease on its owning instance lasts this long unless renewed (every third of it); an owner that stops is replaced (shared volume) or answered for with 503 (local disks) after at most this bound', parse: int(1000, 600_000) },
  { env: 'SVC_FORWARD_TIMEOUT_MS', key: 'forwardTimeoutMs', default: '60000', doc: 'with `SVC_CONTROL_PLANE_URL`: longest a request forwarded to its tenant\'s owner may take, answer included; beyond it 503 with Retry-After', parse: int(100, 3_600_000) },
  { env: 'SVC_DATA_DIR_SHARED', key: 'dataDirShared', default: 'false', doc: 'with `SVC_CONTROL_PLANE_URL`: `true` when every instance mounts the same `SVC_DATA_DIR` (a tenant whose owner stops is taken over by another instance; tenants can be moved); `false` = local disks (a tenant stays with its owner and answers 503 while it is down)', parse: bool },
  { env: 'MALLOC_ARENA_MAX', key: 'mallocArenaMax', default: '2', doc: "glibc's malloc arenas: read by glibc as the process starts, not by the server, so `npm start` sets it when it is unset, and a server started without it logs a warning. Unset, every thread that allocates (the event loop, the decode workers, the threads running DuckDB's calls) gets an arena of its own, up to 8 a core, and each keeps memory freed in it (bench/README.md, bench:overload)", parse: int(1, 1024) },
  { env: 'MALLOC_MMAP_THRESHOLD_', key: 'mallocMmapThreshold', default: '262144', doc: "bytes from which glibc's malloc maps an allocation of its own, returned to the system when freed (request bodies, decoded batches); read by glibc as the process starts, so `npm start` sets it when it is unset, as `MALLOC_ARENA_MAX`. Unset, glibc raises it up to 32 MiB as large buffers are freed, and bodies then stay in the arenas' freed memory (bench/README.md, bench:overload)", parse: int(0, 32 * MiB) },
];

/** A setting's default, as the server would use it. */
export function settingDefault(env: string): string {
  const s = SETTINGS.find((x) => x.env === env);
  if (!s) throw new Error(`unknown setting ${env}`);
  return s.default;
}

export class ConfigError extends Error {}

/** Reads and validates every setting; throws one ConfigError naming each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const out: Partial<Record<keyof Config, unknown>> = {};
  const problems: string[] = [];
  for (const s of SETTINGS) {
    const raw = env[s.env] ?? s.default;
    try {
      out[s.key] = s.parse(raw);
    } catch (err) {
      problems.push(`${s.env}=${s.secret ? '(not shown)' : JSON.stringify(raw)}: ${(err as Error).message}`);
    }
  }
  const unknown = Object.keys(env).filter((k) => k.startsWith('SVC_') && !SETTINGS.some((s) => s.env === k) && !CLIENT_ENV.includes(k));
  for (const k of unknown) problems.push(`${k}: unknown setting (known: ${SETTINGS.map((s) => s.env).join(', ')})`);
  if (out.auth === 'open' && out.controlPlaneUrl) problems.push('SVC_CONTROL_PLANE_URL: only applies with SVC_AUTH=keys (open mode has no tenants or keys)');
  if (out.controlPlaneUrl && !out.clusterSecret && !out.adminToken) problems.push('SVC_CLUSTER_SECRET: several instances on one control plane forward requests to each other, signed with SVC_CLUSTER_SECRET (or SVC_ADMIN_TOKEN): set one of them, the same on every instance');
  if (problems.length) throw new ConfigError(`invalid configuration:\n  ${problems.join('\n  ')}`);
  return out as Config;
}

/** DuckDB's thread count for a configuration: explicit, or the cores the decode workers leave. */
export function duckdbThreads(config: Pick<Config, 'duckdbThreads' | 'workers'>, cores = availableParallelism()): number {
  return config.duckdbThreads || Math.max(1, cores - config.workers);
}

/** Variables read by the CLI, not the server; allowed in the server's environment. */
export const CLIENT_ENV: readonly string[] = ['SVC_URL', 'SVC_API_KEY', 'SVC_CLI_TIMEOUT_MS', 'SVC_OTLP_URL'];
