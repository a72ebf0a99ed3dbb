// POST /v1/query: one guarded SELECT, the raw statement as the text/plain body, rows as JSON objects.
import { ApiError } from '../../core/errors.js';
import { json } from '../http.js';
import { DOCS } from '../docs.js';
import type { JsonRow } from '../../query/json.js';
import { tenantOf, type RouteSpec } from '../route.js';

/** The 200 answer of POST /v1/query (the body is the statement as text/plain): the rows as JSON objects. */
export type QueryResponse = JsonRow[];

export function queryRoute(): RouteSpec {
  return {
    method: 'POST',
    path: '/v1/query',
    doc: DOCS.runQuery,
    maxBody: 256 * 1024,
    async handler(req) {
      // The body is the statement whatever its label (curl --data says form-urlencoded but sends the
      // bytes as they are); only a JSON-wrapped statement, a common mistake, is refused.
      const ct = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      const sql = req.body.toString('utf8');
      if (ct === 'application/json' && /^\s*[{"]/.test(sql)) {
        throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'the body is JSON; /v1/query takes the raw SQL statement', 'send the statement itself as the body with Content-Type: text/plain');
      }
      if (!sql.trim()) throw new ApiError('BAD_REQUEST', 'the body is empty', 'send one SELECT statement as the text/plain body');
      // The tenant's own DuckDB instance: no other tenant's file is attached to it or readable from it.
      const answer = await tenantOf(req).queries.query(sql);
      return json(200, answer.rows satisfies QueryResponse);
    },
  };
}
