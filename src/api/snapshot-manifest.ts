// The manifest of a snapshot (manifest.json beside the Parquet files): what a snapshot is, read by
// the server that restores it and by the CLI that writes and checks it. The parser trusts nothing:
// a manifest comes from a file anyone can edit.
import { createHash } from 'node:crypto';
import { arr, component, int, int64, iso, obj, str, Type, type Static } from '../core/schema.js';

export const MANIFEST_FILE = 'manifest.json';
export const MANIFEST_FORMAT = 'tds-snapshot';

export const SnapshotColumn = obj({ name: str(), type: str('DuckDB type') });

export const SnapshotTableEntry = obj({
  name: str('the table'),
  file: str('its Parquet file, beside the manifest'),
  rows: int64('rows in the file'),
  bytes: int64('size of the file'),
  sha256: str('SHA-256 of the file, hex'),
  columns: arr(SnapshotColumn, "the table's columns, in order"),
});

export const SnapshotManifest = component(
  'SnapshotManifest',
  obj(
    {
      format: str(`always \`${MANIFEST_FORMAT}\``),
      version: int('the snapshot format; a reader refuses a newer one'),
      service_version: str('the version of the service that wrote it'),
      schema_version: int("the store's schema version"),
      created_at: iso(),
      window: obj({ from_ts: int64('inclusive, µs'), to_ts: int64('exclusive, µs'), from_iso: iso(), to_iso: iso() }),
      services: Type.Unsafe<string[] | null>({ type: ['array', 'null'], items: { type: 'string' }, description: 'the services it holds; null for all' }),
      tables: arr(SnapshotTableEntry),
      compression: str('Parquet compression codec'),
    },
    'What a snapshot holds: the window, the services, and per table its Parquet file, row count, checksum and columns.',
  ),
);

export type SnapshotManifest = Static<typeof SnapshotManifest>;
export type SnapshotTableEntry = Static<typeof SnapshotTableEntry>;

export class ManifestError extends Error {}

export const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** A manifest's JSON checked field by field; throws ManifestError naming the first problem. */
export function parseManifest(text: string): SnapshotManifest {
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch (e) {
    throw new ManifestError(`${MANIFEST_FILE} is not JSON: ${(e as Error).message}`);
  }
  const bad = (what: string): never => {
    throw new ManifestError(`${MANIFEST_FILE}: ${what}`);
  };
  if (!isObj(m)) return bad('not a JSON object');
  if (m['format'] !== MANIFEST_FORMAT) bad(`format is not ${MANIFEST_FORMAT}`);
  if (!isCount(m['version']) || m['version'] < 1) bad('version is not a positive integer');
  if (!isCount(m['schema_version'])) bad('schema_version is not an integer');
  const w = m['window'];
  if (!isObj(w) || !isCount(w['from_ts']) || !isCount(w['to_ts']) || w['to_ts'] <= w['from_ts']) bad('window is not {from_ts, to_ts} with from_ts < to_ts');
  const services = m['services'];
  if (services !== null && (!Array.isArray(services) || services.some((s) => typeof s !== 'string'))) bad('services is neither null nor a list of names');
  const tables = m['tables'];
  if (!Array.isArray(tables)) return bad('tables is not a list');
  const names = new Set<string>();
  for (const t of tables) {
    if (!isObj(t) || typeof t['name'] !== 'string' || typeof t['file'] !== 'string') return bad('a table entry has no name or file');
    if (names.has(t['name'])) bad(`table ${t['name']} is listed twice`);
    names.add(t['name']);
    if (!isCount(t['rows']) || !isCount(t['bytes'])) bad(`table ${t['name']}: rows and bytes must be counts`);
    if (typeof t['sha256'] !== 'string' || !/^[0-9a-f]{64}$/.test(t['sha256'])) bad(`table ${t['name']}: sha256 is not 64 hex digits`);
    const columns = t['columns'];
    if (!Array.isArray(columns) || columns.some((c) => !isObj(c) || typeof c['name'] !== 'string' || typeof c['type'] !== 'string')) bad(`table ${t['name']}: columns is not a list of {name, type}`);
  }
  return m as unknown as SnapshotManifest;
}

/** Checks each table's file (by its name in the manifest) against its size and checksum; throws ManifestError. */
export function checkFiles(m: SnapshotManifest, fileOf: (name: string) => Uint8Array | undefined): void {
  for (const t of m.tables) {
    const data = fileOf(t.file);
    if (data === undefined) throw new ManifestError(`${t.file} (table ${t.name}) is missing`);
    if (data.length !== t.bytes) throw new ManifestError(`${t.file} (table ${t.name}) is ${data.length} bytes, the manifest says ${t.bytes}: truncated or changed`);
    if (sha256(data) !== t.sha256) throw new ManifestError(`${t.file} (table ${t.name}) does not match its checksum: changed or corrupted`);
  }
}
