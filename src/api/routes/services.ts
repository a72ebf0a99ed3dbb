// GET /v1/services: every service that reported any signal, with first and last time seen.
import type { ReadPool } from '../../store/readers.js';
import { readRows } from '../../store/readers.js';
import { SERVICES } from '../../store/schema.js';
import { json, type RouteSpec } from '../http.js';
import { DOCS } from '../docs.js';
import { isoFromUs } from '../time.js';

export interface ServiceEntry {
  service_name: string;
  first_seen_ts: number;
  last_seen_ts: number;
  first_seen: string;
  last_seen: string;
}

export async function listServices(reads: ReadPool): Promise<ServiceEntry[]> {
  const rows = await reads.use((c) =>
    readRows(c, `SELECT service_name, epoch_us(first_seen) AS f, epoch_us(last_seen) AS l FROM ${SERVICES.name} ORDER BY service_name`),
  );
  return rows.map((r) => {
    const f = Number(r['f']);
    const l = Number(r['l']);
    return { service_name: String(r['service_name']), first_seen_ts: f, last_seen_ts: l, first_seen: isoFromUs(f), last_seen: isoFromUs(l) };
  });
}

export function servicesRoute(reads: ReadPool): RouteSpec {
  return { method: 'GET', path: '/v1/services', doc: DOCS.listServices, handler: async () => json(200, { services: await listServices(reads) }) };
}
