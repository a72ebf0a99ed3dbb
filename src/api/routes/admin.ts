// GET /admin/status: every status row of the instance — build, store, ingest, query and detection.
import { json, type RouteSpec } from '../http.js';
import { DOCS } from '../docs.js';

export type StatusSource = () => Promise<Record<string, unknown>> | Record<string, unknown>;

export function statusRoute(sources: Record<string, StatusSource>): RouteSpec {
  return {
    method: 'GET',
    path: '/admin/status',
    doc: DOCS.getAdminStatus,
    async handler() {
      const status: Record<string, unknown> = {};
      for (const [name, get] of Object.entries(sources)) status[name] = await get();
      return json(200, { status });
    },
  };
}
