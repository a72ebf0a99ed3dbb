// POST /v1/query: one guarded SELECT, the raw statement as the text/plain body, rows as JSON objects.
import { ApiError } from '../errors.js';
import { json, type RouteSpec } from '../http.js';
import { DOCS } from '../docs.js';
import type { QueryPool } from '../../query/index.js';

const TEXT_TYPES = new Set(['', 'text/plain', 'application/sql', 'text/sql']);

export function queryRoute(queries: QueryPool): RouteSpec {
  return {
    method: 'POST',
    path: '/v1/query',
    doc: DOCS.runQuery,
    maxBody: 256 * 1024,
    async handler(req) {
      const ct = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (!TEXT_TYPES.has(ct)) {
        throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `Content-Type ${ct} is not accepted`, 'send the raw SQL statement as the body with Content-Type: text/plain');
      }
      const sql = req.body.toString('utf8');
      if (!sql.trim()) throw new ApiError('BAD_REQUEST', 'the body is empty', 'send one SELECT statement as the text/plain body');
      const answer = await queries.query(sql);
      return json(200, answer.rows);
    },
  };
}
