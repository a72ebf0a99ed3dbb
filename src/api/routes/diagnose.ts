// POST /v1/diagnose and its earlier name POST /v1/investigate: the same body, the same answer. Each
// tenant store admits its own diagnoses (diagnose/admission.ts); a call refused for want of room is
// a 200 whose every service is in `errors` (the spec: per-service failures are never HTTP errors),
// with Retry-After.
import { ok } from '../http.js';
import { API } from '../endpoints.js';
import { diagnose, parseDiagnoseRequest, type DiagnoseRequest } from '../../diagnose/index.js';
import type { DiagnoseResponse } from '../../diagnose/block-schema.js';
import { compactResponse } from '../../diagnose/compact.js';
import { busyMessage, createAdmission, type Admission, type AdmissionOptions, type AdmissionStatus, type Busy } from '../../diagnose/admission.js';
import { route, tenantOf, type RouteSpec } from '../route.js';

/** One admission per tenant store, created on its first diagnosis. */
export interface DiagnoseAdmissions {
  of(tenant: string): Admission<DiagnoseResponse>;
  /** Every tenant's counts added up (limit and max_waiting are per tenant). */
  status(): AdmissionStatus;
  tenantStatus(tenant: string): AdmissionStatus | null;
}

export function diagnoseAdmissions(opts: AdmissionOptions): DiagnoseAdmissions {
  const byTenant = new Map<string, Admission<DiagnoseResponse>>();
  return {
    of(tenant) {
      return byTenant.get(tenant) ?? byTenant.set(tenant, createAdmission(opts)).get(tenant)!;
    },
    status() {
      const total: AdmissionStatus = { limit: opts.limit, max_waiting: opts.maxWaiting, running: 0, waiting: 0, busy: 0, coalesced: 0 };
      for (const a of byTenant.values()) {
        const s = a.status();
        total.running += s.running;
        total.waiting += s.waiting;
        total.busy += s.busy;
        total.coalesced += s.coalesced;
      }
      return total;
    },
    tenantStatus: (tenant) => byTenant.get(tenant)?.status() ?? null,
  };
}

/** Identical calls (same services in the same order, same resolved window) share one run. */
export const diagnoseKey = (req: DiagnoseRequest): string => JSON.stringify([req.services, req.from, req.to, req.reference ?? null]);

/** The answer to a call that did not run: every requested service in `errors`. */
export function busyResponse(services: readonly string[], busy: Busy): DiagnoseResponse {
  const errors = Object.create(null) as DiagnoseResponse['errors'];
  for (const s of services) errors[s] = busyMessage(busy);
  return { results: {}, errors };
}

/** Logs a busy answer at most once per `everyMs`, with how many there were since the last line (a flood of calls is not a flood of lines). */
export function busyLogger(log: (f: Record<string, unknown>) => void, everyMs = 10_000): (tenant: string, busy: Busy) => void {
  let last = -Infinity;
  let unlogged = 0;
  return (tenant, busy) => {
    unlogged++;
    const now = Date.now();
    if (now - last < everyMs) return;
    last = now;
    log({ level: 'warn', msg: 'diagnosis answered busy', tenant, running: busy.running, waiting: busy.waiting, retry_after_s: busy.retryAfterS, busy_answers: unlogged });
    unlogged = 0;
  };
}

interface Options {
  timeoutMs: number;
  /** SVC_DIAGNOSE_SCAN_SPANS. */
  scanSpans: number;
  /** SVC_DIAGNOSE_LOG_SLOW_MS; 0 = none logged. */
  logSlowMs: number;
  admissions: DiagnoseAdmissions;
  log: (f: Record<string, unknown>) => void;
}

function diagnoseRoute(endpoint: typeof API.diagnose | typeof API.investigate, opts: Options, logBusy: (tenant: string, busy: Busy) => void): RouteSpec {
  return route(
    endpoint,
    async (req) => {
      const arrived = Date.now();
      const request = parseDiagnoseRequest(req.body, arrived * 1000);
      const t = tenantOf(req);
      const timings = opts.logSlowMs > 0 ? new Map<string, number>() : undefined;
      const deps = { reads: t.reads, services: () => t.writer.services(), timeoutMs: opts.timeoutMs, scanSpans: opts.scanSpans, deadline: arrived + opts.timeoutMs, timings };
      const answer = await opts.admissions.of(t.tenant).run(diagnoseKey(request), () => diagnose(deps, request));
      const ms = Date.now() - arrived;
      if (timings?.size && ms >= opts.logSlowMs) opts.log(slowDiagnosis(t.tenant, request.services, ms, timings));
      // The view is applied to the answer as diagnosed, so identical calls share one run whatever view each asks for.
      const shown = (r: DiagnoseResponse) => (request.detail === 'findings' ? compactResponse(r, request.maxBytes) : r);
      if (answer.busy === null) return ok(endpoint, shown(answer.value));
      logBusy(t.tenant, answer.busy);
      return ok(endpoint, shown(busyResponse(request.services, answer.busy)), { 'retry-after': String(answer.busy.retryAfterS) });
    },
    { maxBody: 64 * 1024 },
  );
}

/** Statements a slow-diagnosis line names, slowest first. */
const SLOW_STATEMENTS = 8;

/** The log line of a slow diagnosis. Statements run side by side, so their times may add up to more than `ms`. */
export function slowDiagnosis(tenant: string, services: readonly string[], ms: number, timings: ReadonlyMap<string, number>): Record<string, unknown> {
  const slowest = [...timings].sort((a, b) => b[1] - a[1]).slice(0, SLOW_STATEMENTS);
  return { level: 'info', msg: 'slow diagnosis', tenant, services, ms, statements_ms: Object.fromEntries(slowest.map(([n, t]) => [n, Math.round(t)])) };
}

export function diagnoseRoutes(opts: Options): RouteSpec[] {
  const logBusy = busyLogger(opts.log);
  return [diagnoseRoute(API.diagnose, opts, logBusy), diagnoseRoute(API.investigate, opts, logBusy)];
}
