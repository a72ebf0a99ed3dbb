// Assembles the service: store → writer → worker pool → receivers and API. Started downstream first
// (store before anything that writes to it); if a step fails, what already started is stopped.
import { availableParallelism } from 'node:os';
import { stopStack } from './core/stops.js';
import type * as grpc from '@grpc/grpc-js';
import { join, resolve } from 'node:path';
import { duckdbThreads, type Config } from './core/config.js';
import { createDecodePool, createPool, type Pool } from './compute/pool.js';
import { createAdmission, type Admission } from './receivers/admission.js';
import { createLatencyAdmission } from './receivers/latency-admission.js';
import { createRefusalPace, refusalsPerSecond } from './receivers/refusal-pace.js';
import { memoryBudget } from './core/budget.js';
import { loadUws, mountRoutes, type Server as HttpServer } from './api/http.js';
import { otlpHttpRoutes } from './receivers/otlp-http.js';
import { profileRoutes } from './receivers/profiles-http.js';
import { admitAtMessage, bindGrpc, createOtlpGrpcServer } from './receivers/otlp-grpc.js';
import { healthRoute } from './api/routes/health.js';
import { servicesRoute } from './api/routes/services.js';
import { traceRoute } from './api/routes/traces.js';
import { openapiRoute } from './api/routes/openapi.js';
import type { IngestContext } from './receivers/ingest.js';
import { queryRoute } from './api/routes/query.js';
import { anomaliesRoute } from './api/routes/anomalies.js';
import { alertsRoute } from './api/routes/alerts.js';
import { adminRoutes, statusRoute } from './api/routes/admin.js';
import { SCHEMA_VERSION } from './store/schema.js';
import { diagnoseAdmissions, diagnoseRoutes } from './api/routes/diagnose.js';
import { loopbackUrl, mcpRoute } from './mcp/route.js';
import { duckdbMemory, tenantDir } from './store/db.js';
import { openTenantRuntime, type TenantRuntime } from './tenancy/runtime.js';
import { createRegistry } from './tenancy/registry.js';
import { createGate, OPEN_TENANT } from './tenancy/gate.js';
import { createControlPlane, type ControlPlane } from './tenancy/control-plane.js';
import { openEmbeddedBackend } from './tenancy/embedded.js';
import { openPostgresBackend } from './tenancy/postgres.js';
import { SERVICE_VERSION } from './core/version.js';
import { type RouteSpec } from './api/route.js';
import { openPlacement, storeBusy, type Placement } from './tenancy/placement.js';
import { createForwarder, type Forwarder } from './tenancy/forward.js';
import { moveRoute } from './api/routes/placement.js';
import { detectRoute } from './api/routes/detect.js';
import { snapshotRoutes } from './api/routes/snapshot.js';

export interface Running {
  ports: { api: number; otlpHttp: number; otlpGrpc: number };
  /** Open mode's one tenant (`default`) as opened at start; null in keys mode, whose tenants open on demand. */
  local: TenantRuntime | null;
  stop(): Promise<void>;
}

export type Log = (fields: Record<string, unknown>) => void;

export const jsonLog: Log = (fields) => process.stdout.write(JSON.stringify({ time: new Date().toISOString(), ...fields }) + '\n');

/** How the other instances reach this one: SVC_INSTANCE_URL (its host also serves OTLP/HTTP), else SVC_HOST. */
export function instanceUrls(config: Pick<Config, 'instanceUrl' | 'host'>, api: number, otlpHttp: number): { api: string; otlpHttp: string } {
  if (config.instanceUrl) {
    const u = new URL(config.instanceUrl);
    u.port = String(otlpHttp);
    return { api: config.instanceUrl, otlpHttp: u.origin };
  }
  if (config.host === '0.0.0.0' || config.host === '::' || config.host === '') {
    throw new Error(`SVC_INSTANCE_URL: with SVC_HOST=${config.host || '(empty)'} the other instances cannot tell this one's address; set SVC_INSTANCE_URL=http://<address>:<API port>`);
  }
  const h = config.host.includes(':') ? `[${config.host}]` : config.host;
  return { api: `http://${h}:${api}`, otlpHttp: `http://${h}:${otlpHttp}` };
}

export async function startServer(config: Config, log: Log = jsonLog): Promise<Running> {
  const uws = loadUws(); // fail before touching the data directory
  const stops = stopStack((err) => log({ level: 'error', msg: 'shutdown step failed', error: err.message }));
  const stopAll = stops.stopAll;
  let ready = false;
  try {
    const threads = duckdbThreads(config);
    // The decode pool yields to the event loop and DuckDB under a saturated CPU; the one log miner
    // thread does not (it is every log record's serial path). Both serve every tenant.
    const pool: Pool = createDecodePool(config.workers, { lowPriority: true });
    stops.push(() => pool.destroy());
    const logPool: Pool = createPool(1);
    stops.push(() => logPool.destroy());
    let control: ControlPlane | null = null;
    if (config.auth === 'keys') {
      const backend = config.controlPlaneUrl ? await openPostgresBackend(config.controlPlaneUrl) : openEmbeddedBackend(config.dataDir);
      control = await createControlPlane(backend, { refreshMs: config.controlPlaneRefreshMs, log });
      stops.push(() => control!.close());
    }
    // Several instances on one PostgreSQL control plane: each tenant's store is open on its owner
    // only, and requests reaching another instance are forwarded there (tenancy/placement.ts).
    // Stopped after the stores close (stops run in reverse), so its leases are given up last.
    let placement: Placement | null = null;
    let forwarder: Forwarder | null = null;
    if (config.auth === 'keys' && config.controlPlaneUrl) {
      const p = await openPlacement({
        url: config.controlPlaneUrl,
        instanceId: config.instanceId,
        ttlMs: config.leaseTtlMs,
        shared: config.dataDirShared,
        release: (tenant) => registry.evict(tenant),
        openTenants: () => registry.openTenants(),
        log,
      });
      placement = p;
      stops.push(() => p.stop());
      forwarder = createForwarder({ secret: config.clusterSecret || config.adminToken, instanceId: () => p.instanceId(), timeoutMs: config.forwardTimeoutMs, retryAfterS: Math.max(1, Math.ceil(config.leaseTtlMs / 3000)) });
    }
    const budget = memoryBudget(config);
    const registry = createRegistry({
      dataDir: config.dataDir,
      open: (tenant) =>
        openTenantRuntime({ config, threads, pool, logPool, log }, tenant).catch((err: unknown) => {
          throw storeBusy(err) ?? err;
        }),
      idleS: config.tenantIdleS,
      maxOpen: budget.stores,
      pinned: [OPEN_TENANT],
      reopenRows: budget.storeReopenRows,
      log,
    });
    stops.push(() => registry.closeAll());
    // Open mode opens its one store now, as before (a broken store fails the start, not a request).
    const local = config.auth === 'open' ? await registry.use(OPEN_TENANT, (rt) => rt) : null;
    // Open mode's store as it is now: the registry opens it again after DuckDB invalidated it.
    const current = () => (local ? registry.use(OPEN_TENANT, (rt) => rt) : Promise.resolve(null));
    const admission: Admission = createAdmission({ maxInflightBytes: budget.maxInflightBytes, dataDir: tenantDir(config.dataDir, OPEN_TENANT), minFreeDiskBytes: config.minFreeDiskBytes });
    stops.push(() => admission.stop());
    const latency = createLatencyAdmission({ maxAckWaitMs: config.maxAckWaitMs });
    const gate = createGate({ config, control, registry, placement, forwarder });
    const pace = createRefusalPace({ perSecond: refusalsPerSecond(availableParallelism()) });
    const ctx: IngestContext = { pool, logPool, admission, latency, pace, gate, maxBodyBytes: config.maxBodyBytes, ingested: (t) => registry.ingested(t) };
    const startedAt = Date.now();
    const ingestTotals = () => ({
      inflight_bytes: admission.inflightBytes(),
      max_inflight_bytes: budget.maxInflightBytes,
      max_ack_wait_ms: config.maxAckWaitMs,
      ack_wait_limit_ms: latency.limitMs(),
      estimated_ack_wait_ms: latency.estimatedWaitMs(),
      refused_for_wait: latency.refused(),
      observed_ack_wait: latency.observed(),
      refusals_waiting: pace.waiting(),
      refusals_paced: pace.paced(),
      max_body_bytes: config.maxBodyBytes,
      workers: config.workers,
      queued_tasks: pool.queueSize,
    });
    // The budget and what uses it; DuckDB's own figures come from the open-mode store (the hosted
    // variant's stores each have the limit below).
    const memoryStatus = async () => {
      const duckdb = local ? { duckdb: await (await current())!.reads.use((c) => duckdbMemory(c)) } : {};
      const m = process.memoryUsage();
      return {
        budget_bytes: budget.bytes,
        budget_source: budget.source,
        duckdb_memory_limit_per_store: budget.duckdbMemoryLimit,
        max_open_stores: budget.stores,
        store_reopen_rows: budget.storeReopenRows,
        ...duckdb,
        inflight_bytes: admission.inflightBytes(),
        max_inflight_bytes: budget.maxInflightBytes,
        rss_bytes: m.rss,
        // The main thread's JavaScript heap (the decode workers have their own), and the buffers
        // outside it (request bodies, gRPC messages): with DuckDB's figure, what of the RSS is none.
        js_heap_bytes: m.heapUsed,
        array_buffers_bytes: m.arrayBuffers,
      };
    };
    // Diagnoses wait their turn per tenant store, so that a pile of them cannot starve ingest.
    const diagnoses = diagnoseAdmissions({ limit: config.diagnoseConcurrency, maxWaiting: config.diagnoseQueue, maxWaitMs: config.diagnoseTimeoutMs / 2, timeLimitMs: config.diagnoseTimeoutMs });
    let apiUrl = ''; // known once the API port is bound; the MCP tools call the API there

    const apiRoutes: RouteSpec[] = [
      healthRoute(() => ready),
      servicesRoute(),
      traceRoute(),
      queryRoute(),
      anomaliesRoute(),
      alertsRoute(),
      statusRoute({
        instance: () => ({ version: SERVICE_VERSION, node: process.version, pid: process.pid, uptime_s: Math.round((Date.now() - startedAt) / 1000), auth: config.auth }),
        storage: () => ({
          ...(local ? { path: local.store.path } : { tenants_dir: join(resolve(config.dataDir), 'tenants') }), // the same path when reopened
          schema_version: SCHEMA_VERSION,
          retention_hours: config.retentionHours,
          duckdb_threads: threads,
          disk_free_bytes: admission.diskFree(),
          ...registry.status(),
        }),
        ingest: async () => ({ ...(await current())?.writer.stats(), ...ingestTotals() }),
        refused: () => gate.refused(),
        memory: memoryStatus,
        diagnoses: () => ({ ...diagnoses.status() }),
        detection: async () => (await current())?.detection.status() ?? { per_tenant: true, interval_s: config.detectIntervalS, grace_s: config.detectGraceS },
        ...(control
          ? {
              control_plane: () => control!.status(),
              limits: () => ({ tenant_ingest_bytes_per_s: config.tenantIngestBytesPerS, tenant_max_stored_bytes: config.tenantMaxStoredBytes }),
              ...(placement ? { placement: async () => ({ ...(await placement!.status()), forwarding: forwarder!.stats() }) } : {}),
              tenants: () => Object.fromEntries(control!.tenants().map((t) => [t.id, { status: t.status, key_count: t.keys, ...registry.tenantStatus(t.id), diagnoses: diagnoses.tenantStatus(t.id) }])),
            }
          : {}),
      }),
      ...profileRoutes(ctx),
      ...diagnoseRoutes({ timeoutMs: config.diagnoseTimeoutMs, scanSpans: config.diagnoseScanSpans, logSlowMs: config.diagnoseLogSlowMs, admissions: diagnoses, log }),
      // The MCP tools call this API over loopback with the caller's key: the gate checks it here
      // (401 before any JSON-RPC) and again on each tool's own call.
      mcpRoute(() => apiUrl),
      ...adminRoutes(control),
      moveRoute({ control, placement, forwarder }),
      detectRoute({ gate, control }),
      ...snapshotRoutes({ logPool, maxRestoreBytes: config.restoreMaxBytes }),
    ];
    apiRoutes.push(openapiRoute(() => apiRoutes, config.auth)); // last: it describes the final route list
    const listeners: unknown[] = [];
    const servers: HttpServer[] = [];
    const listen = (name: 'api' | 'otlpHttp', routes: RouteSpec[], port: number) =>
      new Promise<number>((resolve, reject) => {
        const app = uws.App();
        servers.push(mountRoutes(app, routes, gate, name));
        app.listen(config.host, port, (token) => {
          if (!token) return reject(new Error(`${name}: cannot listen on ${config.host}:${port}`));
          listeners.push(token);
          resolve(uws.us_socket_local_port(token));
        });
      });
    const grpcServer: grpc.Server = createOtlpGrpcServer(ctx);
    const otlpGrpc = await bindGrpc(grpcServer, config.host, config.otlpGrpcPort, admitAtMessage(ctx));
    stops.push(() => new Promise<void>((r) => grpcServer.tryShutdown(() => r())));
    const otlpHttp = await listen('otlpHttp', otlpHttpRoutes(ctx), config.otlpHttpPort);
    const api = await listen('api', apiRoutes, config.apiPort);
    apiUrl = loopbackUrl(config.host, api);
    if (placement) await placement.start(instanceUrls(config, api, otlpHttp));
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
    if (config.auth === 'keys') log({ level: 'info', msg: 'hosted variant', auth: 'keys', control_plane: control!.status()['backend'], admin: config.adminToken ? 'enabled' : 'disabled' });
    return {
      ports: { api, otlpHttp, otlpGrpc },
      local,
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
