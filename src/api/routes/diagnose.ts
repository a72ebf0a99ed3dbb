// POST /v1/diagnose and its earlier name POST /v1/investigate: the same body, the same answer.
import { json } from '../http.js';
import { DOCS } from '../docs.js';
import { diagnose, parseDiagnoseRequest, type DiagnoseResponse } from '../../diagnose/index.js';
import { tenantOf, type RouteDoc, type RouteSpec } from '../route.js';

/** The body of POST /v1/diagnose (and /v1/investigate); the server applies the default window. */
export interface DiagnoseBody {
  services?: string[];
  service?: string;
  from_ts?: number | null;
  to_ts?: number | null;
}

export type { DiagnoseResponse };

function route(path: string, doc: RouteDoc, timeoutMs: number): RouteSpec {
  return {
    method: 'POST',
    path,
    doc,
    maxBody: 64 * 1024,
    async handler(req) {
      const request = parseDiagnoseRequest(req.body, Date.now() * 1000);
      const t = tenantOf(req);
      return json(200, await diagnose({ reads: t.reads, services: () => t.writer.services(), timeoutMs }, request));
    },
  };
}

export function diagnoseRoutes(opts: { timeoutMs: number }): RouteSpec[] {
  return [route('/v1/diagnose', DOCS.diagnose, opts.timeoutMs), route('/v1/investigate', DOCS.investigate, opts.timeoutMs)];
}
