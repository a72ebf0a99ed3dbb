// Profile ingest on the API port: POST /, /ingest, /ingest/pyroscope and /push.v1.PusherService/Push
// (identical behaviour), and OTLP profiles on the OTLP/HTTP port (POST /v1development/profiles).
// With `name` the body is one raw pprof; without it, a push.v1.PushRequest. Decoding runs in the pool.
import { ApiError } from '../core/errors.js';
import { json } from '../api/http.js';
import { API } from '../api/endpoints.js';
import type { IngestQuery } from '../pipeline/decode/profiles/index.js';
import { admitIngest, ingest, type IngestContext } from './ingest.js';
import { tenantOf, type Request, type RouteSpec } from '../api/route.js';

const BINARY_TYPES = new Set(['application/octet-stream', 'application/proto', 'binary/octet-stream', 'application/x-protobuf', 'application/protobuf']);

/** The accepted media type (lower case, parameters kept for multipart's boundary), or a 400. */
export function profileContentType(req: Request): string {
  const raw = (req.headers['content-type'] ?? '').trim();
  const base = raw.split(';')[0]!.trim().toLowerCase();
  if (base === '') return 'application/octet-stream'; // a missing Content-Type is a binary body
  if (BINARY_TYPES.has(base)) return base;
  if (base === 'multipart/form-data') return 'multipart/form-data; ' + raw.slice(raw.indexOf(';') + 1).trim();
  if (base === 'application/json') return base; // the Connect JSON form of a push request
  throw new ApiError(
    'BAD_REQUEST',
    `unsupported media type ${JSON.stringify(raw)}`,
    'send application/octet-stream, application/proto, binary/octet-stream or multipart/form-data (field `profile`)',
  );
}

const ENDPOINTS = [API.ingestProfileRoot, API.ingestProfile, API.ingestProfilePyroscope, API.ingestProfilePush];

export function profileRoutes(ctx: IngestContext): RouteSpec[] {
  return ENDPOINTS.map((endpoint) => ({
    method: endpoint.method,
    path: endpoint.path,
    doc: endpoint,
    maxBody: ctx.maxBodyBytes,
    admit: (n: number, tenant: string | null) => admitIngest(ctx, tenant, n),
    holdRefusal: ctx.pace.hold,
    async handler(req: Request) {
      const contentType = profileContentType(req);
      if (!req.body.length) throw new ApiError('EMPTY', 'the body is empty', 'send a pprof profile or a push request');
      const q = req.query;
      const query: IngestQuery = {
        name: q.get('name'),
        from: q.get('from'),
        until: q.get('until'),
        sampleRate: q.get('sampleRate'),
        spyName: q.get('spyName'),
        format: q.get('format'),
      };
      const r = await ingest(ctx, tenantOf(req), { kind: 'profile', source: 'pyroscope', body: req.body, contentType, query });
      return json(200, { accepted: { samples: r.accepted, rows: r.parts.reduce((a, p) => a + p.rows, 0) } });
    },
  }));
}
