// GET /v1/services: every service that reported any signal, with first and last time seen. Answered
// from the writer's copy of the services table (store/writer.ts), not by a query.
import type { ServiceSpans } from '../../store/batch.js';
import { json } from '../http.js';
import { DOCS } from '../docs.js';
import { isoFromUs } from '../../core/time.js';
import { tenantOf, type RouteSpec } from '../route.js';

export interface ServiceEntry {
  service_name: string;
  first_seen_ts: number;
  last_seen_ts: number;
  first_seen: string;
  last_seen: string;
}

/** The entries by service name in UTF-8 byte order, as the table's ORDER BY service_name gave them. */
export function listServices(spans: Readonly<ServiceSpans>): ServiceEntry[] {
  return Object.keys(spans)
    .map((name) => ({ name, key: Buffer.from(name, 'utf8') }))
    .sort((a, b) => Buffer.compare(a.key, b.key))
    .map(({ name }) => {
      const [f, l] = spans[name]!;
      return { service_name: name, first_seen_ts: f, last_seen_ts: l, first_seen: isoFromUs(f), last_seen: isoFromUs(l) };
    });
}

/** The 200 answer of GET /v1/services. */
export interface ServicesResponse {
  services: ServiceEntry[];
}

export function servicesRoute(): RouteSpec {
  return { method: 'GET', path: '/v1/services', doc: DOCS.listServices, handler: (req) => json(200, { services: listServices(tenantOf(req).writer.services()) } satisfies ServicesResponse) };
}
