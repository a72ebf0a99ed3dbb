// `tds snapshot` and `tds restore`: a window of the store as a directory of Parquet files with a
// manifest, and back. The archive the server answers is checked (every checksum) before anything is
// written, and a directory is checked before anything is sent; the manifest's file names are used
// as paths only when they are plain names.
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError, optValue, optValues, parseDurationUs, parseTimestampUs } from './args.js';
import { clientOf, EXIT_ERROR, EXIT_OK, fail, print, type Ctx } from './context.js';
import { readTar, SAFE_NAME, TarError, writeTar } from '../core/tar.js';
import { errorBody } from '../core/errors.js';
import { checkFiles, ManifestError, MANIFEST_FILE, parseManifest, type SnapshotManifest } from '../api/snapshot-manifest.js';

/** A snapshot or restore of a large window takes longer than a read: the call's default time limit. */
const SNAPSHOT_TIMEOUT_MS = 600_000;

const timeoutOf = (ctx: Ctx) => (ctx.timeoutGiven ? ctx.timeoutMs : SNAPSHOT_TIMEOUT_MS);

function oneDir(ctx: Ctx): string {
  const [dir, ...rest] = ctx.args.positional;
  if (dir === undefined) throw new UsageError('no directory given', `tds ${ctx.args.command!.name} --help`);
  if (rest.length) throw new UsageError(`unexpected argument ${JSON.stringify(rest[0])}`, `tds ${ctx.args.command!.name} takes one directory`);
  return dir;
}

const summary = (m: SnapshotManifest) => ({
  window: m.window,
  services: m.services,
  tables: m.tables.map((t) => ({ name: t.name, rows: t.rows, bytes: t.bytes })),
  rows: m.tables.reduce((a, t) => a + t.rows, 0),
  bytes: m.tables.reduce((a, t) => a + t.bytes, 0),
});

export async function cmdSnapshot(ctx: Ctx): Promise<number> {
  const dir = oneDir(ctx);
  const fromRaw = optValue(ctx.args, 'from-ts');
  const toRaw = optValue(ctx.args, 'to-ts');
  const last = optValue(ctx.args, 'last');
  let from_ts: number;
  let to_ts: number;
  if (last !== undefined) {
    if (fromRaw !== undefined || toRaw !== undefined) throw new UsageError('--last cannot be combined with --from-ts or --to-ts', 'give either --last DURATION or the timestamps');
    to_ts = (ctx.io.now ?? Date.now)() * 1000;
    from_ts = to_ts - parseDurationUs('last', last);
  } else {
    if (fromRaw === undefined || toRaw === undefined) throw new UsageError('the window is required: --from-ts and --to-ts, or --last', 'tds snapshot --from-ts TS --to-ts TS DIR, or tds snapshot --last 3h DIR');
    from_ts = parseTimestampUs('from-ts', fromRaw);
    to_ts = parseTimestampUs('to-ts', toRaw);
  }
  if (to_ts <= from_ts) throw new UsageError('--to-ts must be after --from-ts');
  const listed = optValue(ctx.args, 'services')?.split(',').map((s) => s.trim()) ?? [];
  if (listed.some((s) => s === '')) throw new UsageError('--services holds an empty name', 'give names separated by commas, e.g. --services checkout,payments');
  const services = [...optValues(ctx.args, 'service'), ...listed];
  const existing = await readdir(dir).catch(() => null);
  if (existing?.length) throw new UsageError(`${dir} is not empty`, 'snapshot into a new or empty directory');
  const started = performance.now();
  const out = await clientOf(ctx).snapshot({ body: { from_ts, to_ts, ...(services.length ? { services } : {}) } }, { timeoutMs: timeoutOf(ctx) });
  if (!out.ok) return fail(ctx.io, out.body, EXIT_ERROR);
  let manifest: SnapshotManifest;
  let members: Map<string, Uint8Array>;
  try {
    members = new Map(readTar(out.body).map((m) => [m.name, m.data]));
    manifest = parseManifest(Buffer.from(members.get(MANIFEST_FILE) ?? []).toString('utf8'));
    checkFiles(manifest, (name) => members.get(name));
  } catch (err) {
    if (err instanceof TarError || err instanceof ManifestError) return fail(ctx.io, errorBody('BAD_RESPONSE', `the server's snapshot archive is not valid: ${err.message}`), EXIT_ERROR);
    throw err;
  }
  await mkdir(dir, { recursive: true });
  for (const [name, data] of members) await writeFile(join(dir, name), data);
  print(ctx.io, { dir, ...summary(manifest), seconds: Math.round(performance.now() - started) / 1000 });
  return EXIT_OK;
}

/** Restores the snapshot in `dir`: the server's answer, or the error (`ok` false). */
export async function restoreDir(ctx: Ctx, dir: string): Promise<{ ok: boolean; result: unknown }> {
  let manifest: SnapshotManifest;
  const files = new Map<string, Uint8Array>();
  try {
    manifest = parseManifest(await readFile(join(dir, MANIFEST_FILE), 'utf8'));
    for (const t of manifest.tables) {
      if (!SAFE_NAME.test(t.file)) throw new ManifestError(`the file of table ${t.name} is not a plain file name: ${JSON.stringify(t.file)}`);
      files.set(t.file, await readFile(join(dir, t.file)));
    }
    checkFiles(manifest, (name) => files.get(name));
  } catch (err) {
    const message = err instanceof ManifestError ? err.message : `cannot read the snapshot: ${(err as Error).message}`;
    return { ok: false, result: errorBody('MALFORMED', `${dir}: ${message}`, 'restore a directory `tds snapshot` wrote, unchanged') };
  }
  const tar = writeTar([{ name: MANIFEST_FILE, data: await readFile(join(dir, MANIFEST_FILE)) }, ...[...files].map(([name, data]) => ({ name, data }))]);
  const started = performance.now();
  const out = await clientOf(ctx).restore({ body: tar }, { timeoutMs: timeoutOf(ctx) });
  if (!out.ok) return { ok: false, result: out.body };
  return { ok: true, result: { ...out.body, seconds: Math.round(performance.now() - started) / 1000 } };
}

export async function cmdRestore(ctx: Ctx): Promise<number> {
  const r = await restoreDir(ctx, oneDir(ctx));
  print(ctx.io, r.result);
  return r.ok ? EXIT_OK : EXIT_ERROR;
}
