// Assembles the service: store → writer → worker pool → receivers and API. Started downstream first
// (store before anything that writes to it); if a step fails, what already started is stopped.
import type * as grpc from '@grpc/grpc-js';
import { duckdbThreads, type Config } from './config.js';
import { openStore, type Store } from './store/db.js';
import { createWriter, type EncodedPart, type Writer } from './store/writer.js';
import { createReadPool, readRows, readServiceSpans, type ReadPool } from './store/readers.js';
import { createPool, type Pool } from './compute/pool.js';
import { createAdmission, type Admission } from './receivers/admission.js';
import { loadUws, mountRoutes, type RouteSpec, type Server as HttpServer } from './api/http.js';
import { otlpHttpRoutes } from './receivers/otlp-http.js';
import { profileRoutes } from './receivers/profiles-http.js';
import { bindGrpc, createOtlpGrpcServer } from './receivers/otlp-grpc.js';
import { healthRoute } from './api/routes/health.js';
import { servicesRoute } from './api/routes/services.js';
import { traceRoute } from './api/routes/traces.js';
import { openapiRoute } from './api/routes/openapi.js';
import type { IngestContext } from './receivers/ingest.js';
import { startRetention } from './store/retention.js';
import { QueryPool } from './query/index.js';
import { queryRoute } from './api/routes/query.js';
import { anomaliesRoute } from './api/routes/anomalies.js';
import { alertsRoute } from './api/routes/alerts.js';
import { statusRoute } from './api/routes/admin.js';
import { startScheduler, type Scheduler } from './detect/scheduler.js';
import { LOG_TEMPLATES, SCHEMA_VERSION } from './store/schema.js';
import { notBuiltRoute } from './api/routes/not-built.js';
import { diagnoseRoutes } from './api/routes/diagnose.js';
import { loopbackUrl, mcpRoute } from './api/routes/mcp.js';
import { DOCS } from './api/docs.js';

export interface Running {
  ports: { api: number; otlpHttp: number; otlpGrpc: number };
  store: Store;
  writer: Writer;
  detection: Scheduler;
  stop(): Promise<void>;
}

export type Log = (fields: Record<string, unknown>) => void;

export const jsonLog: Log = (fields) => process.stdout.write(JSON.stringify({ time: new Date().toISOString(), ...fields }) + '\n');

export async function startServer(config: Config, log: Log = jsonLog): Promise<Running> {
  const uws = loadUws(); // fail before touching the data directory
  const stops: (() => Promise<void> | void)[] = [];
  const stopAll = async () => {
    while (stops.length) {
      try {
        await stops.pop()!();
      } catch (err) {
        log({ level: 'error', msg: 'shutdown step failed', error: (err as Error).message });
      }
    }
  };
  let ready = false;
  try {
    const threads = duckdbThreads(config);
    const store = await openStore(config.dataDir, 'default', { threads, memoryLimit: config.duckdbMemoryLimit, loaders: config.duckdbLoaders });
    stops.push(() => store.close());
    const writer = createWriter(store, { flushIntervalMs: config.flushIntervalMs, services: await readServiceSpans(store.writer) });
    stops.push(() => writer.flush());
    // The query pool locks the database's configuration (external access off but for the spool):
    // every global setting must be applied before it opens.
    const queries = await QueryPool.open(store, { size: 2, timeoutMs: config.queryTimeoutMs, rowCap: config.queryRowCap, spoolDir: store.spoolDir });
    stops.push(() => queries.close());
    const reads: ReadPool = await createReadPool(store, 4);
    stops.push(() => reads.close());
    // The decode pool yields to the event loop and DuckDB under a saturated CPU (API latency under
    // load halved); the one log miner thread does not: it is the serial path of every log record, and
    // at low priority it left a core idle (log ingest 82,000–85,000 against 89,000–103,000 lines/s).
    const pool: Pool = createPool(config.workers, { lowPriority: true });
    stops.push(() => pool.destroy());
    const logPool: Pool = createPool(1);
    stops.push(() => logPool.destroy());
    // Template counts held back between batches are committed before the miner goes away.
    stops.push(async () => {
      const parts = (await logPool.run({ kind: 'logs-flush' })) as EncodedPart[];
      if (parts.length) await writer.submit({ parts, services: {} });
    });
    // Template ids are stable across restarts: the miner starts from the stored templates.
    const templates = await reads.use((c) => readRows(c, `SELECT * EXCLUDE (timestamp) FROM ${LOG_TEMPLATES.name}`));
    await logPool.run({ kind: 'logs-init', rows: templates });
    const admission: Admission = createAdmission({ maxInflightBytes: config.maxInflightBytes, dataDir: store.dir, minFreeDiskBytes: config.minFreeDiskBytes });
    stops.push(() => admission.stop());
    const retention = startRetention(writer, store, config.retentionHours, log);
    stops.push(() => retention.stop());
    const ctx: IngestContext = { pool, logPool, writer, admission, maxBodyBytes: config.maxBodyBytes };
    const detection = startScheduler({ store, writer, reads, pool, graceS: config.detectGraceS }, config.detectIntervalS, log);
    stops.push(() => detection.stop());
    const startedAt = Date.now();
    let apiUrl = ''; // known once the API port is bound; the MCP tools call the API there

    const apiRoutes: RouteSpec[] = [
      healthRoute(() => ready),
      servicesRoute(() => writer.services()),
      traceRoute(reads),
      queryRoute(queries),
      anomaliesRoute(reads),
      alertsRoute(reads),
      statusRoute({
        instance: () => ({ version: '0.1.0', node: process.version, pid: process.pid, uptime_s: Math.round((Date.now() - startedAt) / 1000), auth: 'open' }),
        storage: () => ({ path: store.path, schema_version: SCHEMA_VERSION, retention_hours: config.retentionHours, duckdb_threads: threads, disk_free_bytes: admission.diskFree() }),
        ingest: () => ({ ...writer.stats(), inflight_bytes: admission.inflightBytes(), max_inflight_bytes: config.maxInflightBytes, max_body_bytes: config.maxBodyBytes, workers: config.workers, queued_tasks: pool.queueSize }),
        detection: () => detection.status(),
      }),
      ...profileRoutes(ctx),
      ...diagnoseRoutes({ reads, services: () => writer.services(), timeoutMs: config.diagnoseTimeoutMs }),
      mcpRoute(() => apiUrl),
      notBuiltRoute('POST', '/admin/tenants', DOCS.createTenant, 'this server runs in open mode (self-hosted, one tenant); tenants belong to the hosted variant'),
      notBuiltRoute('DELETE', '/admin/keys/{short_token}', DOCS.revokeKey, 'this server runs in open mode (self-hosted); API keys belong to the hosted variant'),
    ];
    apiRoutes.push(openapiRoute(() => apiRoutes)); // last: it describes the final route list
    const listeners: unknown[] = [];
    const servers: HttpServer[] = [];
    const listen = (name: string, routes: RouteSpec[], port: number) =>
      new Promise<number>((resolve, reject) => {
        const app = uws.App();
        servers.push(mountRoutes(app, routes));
        app.listen(config.host, port, (token) => {
          if (!token) return reject(new Error(`${name}: cannot listen on ${config.host}:${port}`));
          listeners.push(token);
          resolve(uws.us_socket_local_port(token));
        });
      });
    const grpcServer: grpc.Server = createOtlpGrpcServer(ctx);
    const otlpGrpc = await bindGrpc(grpcServer, config.host, config.otlpGrpcPort);
    stops.push(() => new Promise<void>((r) => grpcServer.tryShutdown(() => r())));
    const otlpHttp = await listen('otlp-http', otlpHttpRoutes(ctx), config.otlpHttpPort);
    const api = await listen('api', apiRoutes, config.apiPort);
    apiUrl = loopbackUrl(config.host, api);
    // Stop accepting first, then wait for requests in flight (bounded), then flush and close the store.
    stops.push(async () => {
      for (const t of listeners) uws.us_listen_socket_close(t);
      const deadline = Date.now() + 10_000;
      while (servers.some((s) => s.inflight() > 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    });
    for (const [listener, port] of [['otlp_grpc', otlpGrpc], ['otlp_http', otlpHttp], ['api', api]] as const) {
      log({ level: 'info', msg: 'listening', listener, host: config.host, port });
    }
    ready = true;
    return {
      ports: { api, otlpHttp, otlpGrpc },
      store,
      writer,
      detection,
      async stop() {
        ready = false;
        await stopAll();
      },
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
