// POST /v1/snapshot and POST /v1/restore: a window of the caller's store as a tar of Parquet files
// with a manifest, and back (store/snapshot.ts). Tenant routes: the key alone decides the store, so a
// snapshot of one tenant can neither read nor write another's; the files live in that tenant's own
// spool directory for the length of the call, under names the server chooses (an archive's member
// names are never used as paths).
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiError, shownValue } from '../../core/errors.js';
import { readTar, TarError, writeTar } from '../../core/tar.js';
import { isoFromUs } from '../../core/time.js';
import { SERVICE_VERSION } from '../../core/version.js';
import type { Pool } from '../../compute/pool.js';
import { microsField } from '../../diagnose/request.js';
import { readRows } from '../../store/readers.js';
import { LOG_TEMPLATES, SCHEMA_VERSION } from '../../store/schema.js';
import { conflictingTemplates, exportWindow, readSnapshotTemplates, restoreTables, SNAPSHOT_FORMAT, snapshotTable, type SnapshotWindow } from '../../store/snapshot.js';
import { inTransaction } from '../../store/sql.js';
import type { TenantRuntime } from '../../tenancy/runtime.js';
import { ok } from '../http.js';
import { API } from '../endpoints.js';
import { route, tenantOf, type RouteSpec } from '../route.js';
import { checkFiles, ManifestError, MANIFEST_FILE, MANIFEST_FORMAT, parseManifest, sha256, type SnapshotManifest } from '../snapshot-manifest.js';

/** Services one snapshot may name. */
export const MAX_SNAPSHOT_SERVICES = 1000;

let seq = 0;
/** A spool file of this call: the tenant's own directory, a name of the server's. */
const spoolFile = (rt: TenantRuntime, what: string, table: string) => join(rt.store.spoolDir, `${what}-${process.pid}-${++seq}-${table}.parquet`);

function parseWindow(raw: Buffer): SnapshotWindow {
  let b: unknown;
  try {
    b = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new ApiError('BAD_REQUEST', 'the body is not valid JSON', 'send {"from_ts": <µs>, "to_ts": <µs>, "services": [...]} (services optional)');
  }
  if (!b || typeof b !== 'object' || Array.isArray(b)) throw new ApiError('BAD_REQUEST', 'the body must be a JSON object', 'send {"from_ts": <µs>, "to_ts": <µs>}');
  const o = b as Record<string, unknown>;
  const fromUs = microsField('from_ts', o['from_ts']);
  const toUs = microsField('to_ts', o['to_ts']);
  if (toUs <= fromUs) throw new ApiError('INVALID_WINDOW', `to_ts (${toUs}) must be greater than from_ts (${fromUs})`, 'the window is [from_ts, to_ts)');
  const s = o['services'];
  if (s === undefined || s === null) return { fromUs, toUs, services: null };
  if (!Array.isArray(s) || s.some((x) => typeof x !== 'string' || x === '')) throw new ApiError('BAD_REQUEST', `services must be a list of service names, got ${shownValue(s)}`, 'leave it out for every service');
  if (s.length > MAX_SNAPSHOT_SERVICES) throw new ApiError('BAD_REQUEST', `${s.length} services given; at most ${MAX_SNAPSHOT_SERVICES}`, 'leave services out for every service');
  return { fromUs, toUs, services: [...new Set(s as string[])] };
}

async function snapshot(rt: TenantRuntime, w: SnapshotWindow): Promise<Buffer> {
  const files: string[] = [];
  try {
    const exported = await rt.reads.use((c) =>
      exportWindow(c, w, (t) => {
        const f = spoolFile(rt, 'snapshot', t.name);
        files.push(f);
        return f;
      }),
    );
    const members = [];
    const tables: SnapshotManifest['tables'] = [];
    for (const e of exported) {
      const data = await readFile(e.file);
      const file = `${e.table.name}.parquet`;
      members.push({ name: file, data });
      tables.push({ name: e.table.name, file, rows: e.rows, bytes: data.length, sha256: sha256(data), columns: e.table.columns.map((c) => ({ name: c.name, type: c.type })) });
    }
    const manifest: SnapshotManifest = {
      format: MANIFEST_FORMAT,
      version: SNAPSHOT_FORMAT,
      service_version: SERVICE_VERSION,
      schema_version: SCHEMA_VERSION,
      created_at: new Date().toISOString(),
      window: { from_ts: w.fromUs, to_ts: w.toUs, from_iso: isoFromUs(w.fromUs), to_iso: isoFromUs(w.toUs) },
      services: w.services ? [...w.services] : null,
      tables,
      compression: 'zstd',
    };
    return writeTar([{ name: MANIFEST_FILE, data: Buffer.from(JSON.stringify(manifest, null, 2) + '\n') }, ...members]);
  } finally {
    await Promise.all(files.map((f) => rm(f, { force: true })));
  }
}

const malformed = (message: string) => new ApiError('MALFORMED', message, 'send the archive `POST /v1/snapshot` answered (or `tds restore DIR` on the directory `tds snapshot` wrote), unchanged');

/** The archive's manifest and its Parquet files by table, checked against each other and this server. */
function readArchive(body: Buffer): { manifest: SnapshotManifest; files: Map<string, Uint8Array> } {
  let members;
  try {
    members = readTar(body);
  } catch (err) {
    if (err instanceof TarError) throw malformed(`the body is not a snapshot archive: ${err.message}`);
    throw err;
  }
  const byName = new Map(members.map((m) => [m.name, m.data]));
  const m = byName.get(MANIFEST_FILE);
  if (!m) throw malformed(`the archive has no ${MANIFEST_FILE}`);
  let manifest: SnapshotManifest;
  try {
    manifest = parseManifest(Buffer.from(m).toString('utf8'));
    checkFiles(manifest, (name) => byName.get(name));
  } catch (err) {
    if (err instanceof ManifestError) throw malformed(err.message);
    throw err;
  }
  if (manifest.version > SNAPSHOT_FORMAT) throw new ApiError('BAD_REQUEST', `the snapshot's format ${manifest.version} is newer than this server's (${SNAPSHOT_FORMAT})`, 'restore it on a server of its version or later');
  if (manifest.schema_version > SCHEMA_VERSION) throw new ApiError('BAD_REQUEST', `the snapshot's schema version ${manifest.schema_version} is newer than this server's (${SCHEMA_VERSION})`, 'restore it on a server of its version or later');
  const listed = new Set([MANIFEST_FILE, ...manifest.tables.map((t) => t.file)]);
  for (const name of byName.keys()) if (!listed.has(name)) throw malformed(`the archive holds ${name}, which the manifest does not list`);
  const files = new Map<string, Uint8Array>();
  for (const t of manifest.tables) {
    const s = snapshotTable(t.name);
    if (!s) throw malformed(`the manifest lists table ${JSON.stringify(t.name)}, which this server does not have`);
    const known = new Map(s.table.columns.map((c) => [c.name, c.type]));
    for (const c of t.columns) if (known.get(c.name) !== undefined && known.get(c.name) !== c.type) throw malformed(`${t.name}.${c.name} is ${c.type} in the snapshot, ${known.get(c.name)} here`);
    files.set(t.name, byName.get(t.file)!);
  }
  return { manifest, files };
}

async function restore(rt: TenantRuntime, logPool: Pool, body: Buffer) {
  const { manifest, files } = readArchive(body);
  const staged = new Map<string, string>();
  try {
    for (const [table, data] of files) {
      const f = spoolFile(rt, 'restore', table);
      staged.set(table, f);
      await writeFile(f, data);
    }
    const present = new Map(manifest.tables.map((t) => [t.name, new Set(t.columns.map((c) => c.name))]));
    const templateFile = staged.get(LOG_TEMPLATES.name);
    const templates = templateFile ? await rt.reads.use((c) => readSnapshotTemplates(c, templateFile)) : [];
    const conflicts = await rt.reads.use((c) => conflictingTemplates(c, templates));
    // Ids the miner will not hand out: above every restored id, and a fresh one per conflict.
    const first = templates.length ? ((await logPool.run({ kind: 'logs-reserve', tenant: rt.tenant, above: Math.max(...templates.map((t) => t.template_id)), count: conflicts.length })) as number) : 0;
    const renumber = new Map(conflicts.map((id, i) => [id, first + i]));
    const outcome = await rt.writer.exclusive(() => inTransaction(rt.store.writer, () => restoreTables(rt.store.writer, staged, renumber, present)));
    if (templates.length) {
      const ids = templates.map((t) => renumber.get(t.template_id) ?? t.template_id);
      const rows = await rt.reads.use((c) => readRows(c, `SELECT * EXCLUDE (timestamp) FROM ${LOG_TEMPLATES.name} WHERE template_id IN (${ids.join(', ')})`));
      await logPool.run({ kind: 'logs-adopt', tenant: rt.tenant, rows });
    }
    if (Object.keys(outcome.services).length) await rt.writer.submit({ parts: [], services: outcome.services });
    return { tables: outcome.tables, templates_renumbered: renumber.size, buckets_reopened: outcome.bucketsReopened, window: manifest.window };
  } catch (err) {
    // DuckDB refusing a file (not Parquet, a column missing or of another type, a NULL where the table needs a value)
    if (err instanceof ApiError) throw err;
    const message = (err as Error).message ?? String(err);
    if (/Invalid Input Error|Binder Error|Conversion Error|Constraint Error|No magic bytes|not a parquet file|Parquet/i.test(message)) throw malformed(`a file of the snapshot could not be loaded: ${message}`);
    throw err;
  } finally {
    await Promise.all([...staged.values()].map((f) => rm(f, { force: true })));
  }
}

export function snapshotRoutes(opts: { logPool: Pool; maxRestoreBytes: number }): RouteSpec[] {
  return [
    route(
      API.snapshot,
      async (req) => {
        const tar = await snapshot(tenantOf(req), parseWindow(req.body));
        return { status: 200, headers: { 'content-type': 'application/x-tar', 'content-disposition': 'attachment; filename="snapshot.tar"' }, body: tar };
      },
      { maxBody: 256 * 1024 },
    ),
    route(API.restore, async (req) => ok(API.restore, await restore(tenantOf(req), opts.logPool, req.body)), { maxBody: opts.maxRestoreBytes }),
  ];
}
