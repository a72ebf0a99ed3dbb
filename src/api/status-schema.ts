// The answer of GET /admin/status: one entry per part of the instance, as a schema value with its
// type. server.ts supplies each part (api/routes/admin.ts: StatusSources), so a part that drifts
// from this schema fails to compile. Parts that other modules report in full (a store's writer
// counters, the control plane, placement) keep their fields open beyond those named here.
import { anyObject, arr, bool, dict, int, iso, nstr, num, nullable, obj, oneOf, opt, str, Type, type Static } from '../core/schema.js';

const count = () => Type.Integer({ minimum: 0 });
const msOrNull = () => Type.Unsafe<number | null>({ type: ['integer', 'null'], minimum: 0 });

/** How many diagnoses run and wait (diagnose/admission.ts); limit and max_waiting are per tenant store. */
const admission = {
  limit: count(),
  max_waiting: count(),
  running: count(),
  waiting: count(),
  busy: count(),
  coalesced: count(),
};

const detectionPass = {
  started_at: iso(),
  duration_ms: num(),
  buckets_closed: int(),
  series_updated: int(),
  series_reset: int(),
  points_fed: int(),
  anomalies_written: int(),
  alerts_changed: int(),
  closed_before_bucket: int(),
};

export const StatusSchema = obj(
  {
    instance: obj({ version: str(), node: str(), pid: int(), uptime_s: int(), auth: oneOf(['open', 'keys']) }),
    storage: obj({
      path: opt(str('the open-mode store')),
      tenants_dir: opt(str('where the hosted variant keeps one store per tenant')),
      schema_version: int(),
      retention_hours: num(),
      duckdb_threads: int(),
      disk_free_bytes: Type.Unsafe<number | null>({ type: ['integer', 'null'] }),
      open: int('stores open now'),
      idle_close_s: num(),
      stores: arr(obj({ tenant: str(), refs: int(), closing: bool() })),
    }),
    ingest: obj(
      {
        commits: opt(int()),
        rowsCommitted: opt(int()),
        lastCommitMs: opt(num()),
        lastSyncMs: opt(num()),
        lastCommitRows: opt(int()),
        failedCommits: opt(int()),
        pendingSubmissions: opt(int()),
        checkpoints: opt(int()),
        lastCheckpointMs: opt(num()),
        invalidated: opt(bool()),
        inflight_bytes: int(),
        max_inflight_bytes: int(),
        max_ack_wait_ms: num(),
        ack_wait_limit_ms: num(),
        estimated_ack_wait_ms: num(),
        refused_for_wait: int(),
        observed_ack_wait: obj(
          {
            window_s: num(),
            requests: count(),
            over_limit: count(),
            p50_ms: msOrNull(),
            p99_ms: msOrNull(),
            arrival_p50_ms: msOrNull(),
            arrival_p99_ms: msOrNull(),
          },
          'the waits admitted requests really had, admission to answer, over the last window_s (receivers/observed-waits.ts): over_limit waited past max_ack_wait_ms; arrival_*: admission to the body\'s last byte; null with no request',
        ),
        refusals_waiting: int('refusals held for their turn now (receivers/refusal-pace.ts)'),
        refusals_paced: int('refusals that waited for their turn since start'),
        max_body_bytes: int(),
        workers: int(),
        queued_tasks: int(),
      },
      'the open-mode store\'s writer counters (camelCase), then the instance\'s ingest admission',
    ),
    refused: dict(int(), 'requests the gate refused, by reason'),
    memory: obj({
      budget_bytes: int(),
      budget_source: oneOf(['setting', 'machine']),
      duckdb_memory_limit_per_store: str(),
      max_open_stores: int(),
      store_reopen_rows: int(),
      duckdb: opt(obj({ memory_limit: str(), memory_used_bytes: int(), temporary_storage_bytes: int(), by_tag: dict(int()) }, "the open-mode store's DuckDB")),
      inflight_bytes: int(),
      max_inflight_bytes: int(),
      rss_bytes: int(),
      js_heap_bytes: int(),
      array_buffers_bytes: int(),
    }),
    diagnoses: obj(admission, 'diagnoses running and waiting, added up over the tenant stores; busy: answered busy since start; coalesced: shared the answer of an identical call'),
    detection: obj({
      interval_s: num(),
      grace_s: num(),
      per_tenant: opt(bool('the hosted variant: each tenant store runs its own passes')),
      passes: opt(int()),
      last: opt(nullable(detectionPass, 'the last pass, null before the first')),
      last_error: opt(nstr()),
    }),
    control_plane: opt(anyObject('the hosted variant: its backend and refresh')),
    limits: opt(obj({ tenant_ingest_bytes_per_s: num(), tenant_max_stored_bytes: num() })),
    placement: opt(
      obj(
        { forwarding: obj({ forwarded: int(), received: int(), errors: dict(int(), 'forwards that got no answer from the owner, by reason') }) },
        'several instances: the instances, leases and forwarding',
      ),
    ),
    tenants: opt(
      dict(
        obj({
          status: str(),
          key_count: int(),
          stored_bytes: int(),
          last_ingest: nstr(),
          open: bool(),
          diagnoses: nullable(admission, 'null before its first diagnosis'),
        }),
        'the hosted variant: one entry per tenant',
      ),
    ),
  },
  'all instance status rows',
);

export type Status = Static<typeof StatusSchema>;
