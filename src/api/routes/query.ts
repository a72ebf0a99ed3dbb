// POST /v1/query: one guarded SELECT, the raw statement as the text/plain body, rows as JSON objects.
import { ApiError } from '../../core/errors.js';
import { ok } from '../http.js';
import { API } from '../endpoints.js';
import { route, tenantOf, type RouteSpec } from '../route.js';

export function queryRoute(): RouteSpec {
  return route(
    API.runQuery,
    async (req) => {
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
      return ok(API.runQuery, answer.rows);
    },
    { maxBody: 256 * 1024 },
  );
}
