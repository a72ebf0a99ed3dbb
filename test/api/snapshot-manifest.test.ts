// The snapshot manifest parser: a manifest is a file anyone can edit, so every field is checked and
// the first problem named; files are checked against their size and checksum.
import { describe, expect, it } from 'vitest';
import { checkFiles, ManifestError, parseManifest, sha256 } from '../../src/api/snapshot-manifest.js';

const data = Buffer.from('PAR1 rows PAR1');
const good = {
  format: 'tds-snapshot',
  version: 1,
  service_version: '0.1.0',
  schema_version: 1,
  created_at: '2026-01-01T00:00:00.000Z',
  window: { from_ts: 1767225600000000, to_ts: 1767229200000000, from_iso: '2026-01-01T00:00:00.000000Z', to_iso: '2026-01-01T01:00:00.000000Z' },
  services: null,
  tables: [{ name: 'svc_spans', file: 'svc_spans.parquet', rows: 3, bytes: data.length, sha256: sha256(data), columns: [{ name: 'timestamp', type: 'TIMESTAMP' }] }],
  compression: 'zstd',
};
const edit = (f: (m: any) => void) => {
  const m = structuredClone(good) as any;
  f(m);
  return JSON.stringify(m);
};

describe('snapshot manifest', () => {
  it('reads a good one and checks its files', () => {
    const m = parseManifest(JSON.stringify(good));
    expect(() => checkFiles(m, (n) => (n === 'svc_spans.parquet' ? data : undefined))).not.toThrow();
    expect(() => checkFiles(m, () => undefined)).toThrow(/missing/);
    expect(() => checkFiles(m, () => data.subarray(1))).toThrow(/truncated or changed/);
    expect(() => checkFiles(m, () => Buffer.from('PAR1 rowz PAR1'))).toThrow(/checksum/);
  });

  it.each([
    ['not JSON', '{"format":'],
    ['not an object', '[1,2]'],
    ['another format', edit((m) => (m.format = 'zip'))],
    ['no version', edit((m) => delete m.version)],
    ['an inverted window', edit((m) => (m.window.to_ts = m.window.from_ts))],
    ['services that are not names', edit((m) => (m.services = [1]))],
    ['tables that are not a list', edit((m) => (m.tables = {}))],
    ['a table listed twice', edit((m) => m.tables.push(m.tables[0]))],
    ['a negative row count', edit((m) => (m.tables[0].rows = -1))],
    ['a checksum that is not hex', edit((m) => (m.tables[0].sha256 = 'x'.repeat(64)))],
    ['columns without types', edit((m) => (m.tables[0].columns = [{ name: 'a' }]))],
    ['a prototype key as the whole manifest', '{"__proto__": {"format": "tds-snapshot"}}'],
  ])('refuses %s', (_what, text) => {
    expect(() => parseManifest(text)).toThrow(ManifestError);
  });
});
