// GET /v1/services: every service that reported any signal, with first and last time seen. Answered
// from the writer's copy of the services table (store/writer.ts), not by a query.
import type { ServiceSpans } from '../../store/batch.js';
import { ok } from '../http.js';
import { API } from '../endpoints.js';
import type { Static } from '../../core/schema.js';
import type { ServiceEntry as ServiceEntrySchema } from '../schemas.js';
import { isoFromUs } from '../../core/time.js';
import { route, tenantOf, type RouteSpec } from '../route.js';

export type ServiceEntry = Static<typeof ServiceEntrySchema>;

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

export function servicesRoute(): RouteSpec {
  return route(API.listServices, (req) => ok(API.listServices, { services: listServices(tenantOf(req).writer.services()) }));
}
