// POST /v1/diagnose and its earlier name POST /v1/investigate: the same body, the same answer.
import { json, type RouteDoc, type RouteSpec } from '../http.js';
import { DOCS } from '../docs.js';
import { diagnose, parseDiagnoseRequest, type DiagnoseDeps } from '../../diagnose/index.js';

function route(path: string, doc: RouteDoc, deps: DiagnoseDeps): RouteSpec {
  return {
    method: 'POST',
    path,
    doc,
    maxBody: 64 * 1024,
    async handler(req) {
      const request = parseDiagnoseRequest(req.body, Date.now() * 1000);
      return json(200, await diagnose(deps, request));
    },
  };
}

export function diagnoseRoutes(deps: DiagnoseDeps): RouteSpec[] {
  return [route('/v1/diagnose', DOCS.diagnose, deps), route('/v1/investigate', DOCS.investigate, deps)];
}
