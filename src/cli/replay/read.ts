// Reading a recording for `tds replay`: the files of the arguments (directories read recursively,
// in name order), and each file as the export requests it holds, whatever its format: OTLP JSON
// lines as the Collector file exporter writes them (the signal of each line from its key), a whole
// JSON document (one request, or a list of them), or OTLP protobuf (one request, or 4-byte or varint
// length-prefixed ones; the signal from --signal, the file's name or the bytes); gzip-compressed or
// not. What cannot be read is a problem with its file and line, and the reading goes on.
import { createReadStream } from 'node:fs';
import { open, readdir, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { createGunzip, gunzipSync } from 'node:zlib';
import { jsonSignal } from './json.js';
import { type Signal } from './shape.js';
import { isCompressed, signalOf, splitFile, WireError } from './wire.js';

/** One export request of a recording, as read. */
export type Unit =
  | { kind: 'json'; signal: Signal; file: string; at: number; doc: Record<string, unknown>; raw: Uint8Array | null }
  | { kind: 'proto'; signal: Signal; file: string; at: number; bytes: Uint8Array };

export interface Problem {
  file: string;
  /** The line (JSON lines) or message (protobuf) number, from 1; absent for the whole file. */
  line?: number;
  error: string;
}

/** The longest line read as a request; longer ones are reported and skipped (the server would refuse them anyway). */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;
/** The largest file read whole (protobuf, or a JSON document that is not JSON lines). */
export const MAX_WHOLE_FILE_BYTES = 1024 * 1024 * 1024;

const SNAPSHOT_MANIFEST = 'manifest.json';

export interface Inputs {
  files: string[];
  /** Directories holding a `tds snapshot` (restored, not replayed). */
  snapshots: string[];
  totalBytes: number;
}

/** The files and snapshot directories the arguments name, each file once, in order. */
export async function listInputs(paths: readonly string[]): Promise<Inputs> {
  const out: Inputs = { files: [], snapshots: [], totalBytes: 0 };
  const seen = new Set<string>();
  const visit = async (p: string, top: boolean): Promise<void> => {
    const s = await stat(p);
    if (s.isDirectory()) {
      const entries = (await readdir(p)).sort();
      if (entries.includes(SNAPSHOT_MANIFEST)) {
        out.snapshots.push(p);
        return;
      }
      for (const e of entries) if (!e.startsWith('.')) await visit(join(p, e), false);
    } else if (s.isFile() && !seen.has(p)) {
      seen.add(p);
      out.files.push(p);
      out.totalBytes += s.size;
    } else if (top && !s.isFile()) throw new Error(`${p} is neither a file nor a directory`);
  };
  for (const p of paths) await visit(p, true);
  return out;
}

/** The signal a file's name tells (`traces.jsonl`, `otel-logs.pb`, ...), else null. */
export function signalFromName(file: string): Signal | null {
  const n = basename(file).toLowerCase();
  if (/trace|span/.test(n)) return 'traces';
  if (/log/.test(n)) return 'logs';
  if (/metric/.test(n)) return 'metrics';
  if (/profil/.test(n)) return 'profiles';
  return null;
}

const isGzipped = (b: Uint8Array) => b[0] === 0x1f && b[1] === 0x8b;

/** The first bytes of a file (after gunzip): to tell JSON from protobuf. */
async function head(file: string): Promise<Uint8Array> {
  const raw = await readStart(file, 4096);
  if (!isGzipped(raw)) return raw;
  const gz = createReadStream(file).pipe(createGunzip());
  try {
    for await (const chunk of gz) return chunk as Buffer;
  } catch (err) {
    throw new Error(`not a readable gzip stream: ${(err as Error).message}`);
  } finally {
    gz.destroy();
  }
  return new Uint8Array(0);
}

function firstByte(b: Uint8Array): number | undefined {
  let i = 0;
  if (b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) i = 3; // UTF-8 byte order mark
  while (i < b.length && (b[i] === 0x20 || b[i] === 0x0a || b[i] === 0x0d || b[i] === 0x09)) i++;
  return b[i];
}

/** The lines of a (possibly gzipped) text file, as bytes, with their numbers; lines over `max` bytes come back as null. */
async function* lines(file: string, max: number): AsyncGenerator<{ n: number; bytes: Buffer | null }> {
  const raw = createReadStream(file);
  const gz = isGzipped(await readStart(file, 2)) ? raw.pipe(createGunzip()) : raw;
  let parts: Buffer[] = [];
  let size = 0;
  let over = false;
  let n = 0;
  const flush = (): { n: number; bytes: Buffer | null } => {
    n++;
    const bytes = over ? null : parts.length === 1 ? parts[0]! : Buffer.concat(parts, size);
    parts = [];
    size = 0;
    over = false;
    return { n, bytes };
  };
  for await (const chunk of gz as AsyncIterable<Buffer>) {
    let from = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, from);
      const end = nl < 0 ? chunk.length : nl;
      if (!over) {
        if (size + end - from > max) over = true;
        else {
          parts.push(chunk.subarray(from, end));
          size += end - from;
        }
      }
      if (nl < 0) break;
      yield flush();
      from = nl + 1;
    }
  }
  if (size || over) yield flush();
}

/** The first `n` bytes of a file, as stored. */
async function readStart(file: string, n: number): Promise<Uint8Array> {
  const fh = await open(file, 'r');
  try {
    const b = Buffer.alloc(n);
    const { bytesRead } = await fh.read(b, 0, n, 0);
    return b.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

async function readWhole(file: string): Promise<Buffer> {
  const s = await stat(file);
  if (s.size > MAX_WHOLE_FILE_BYTES) throw new Error(`${s.size} bytes: larger than ${MAX_WHOLE_FILE_BYTES} bytes, the most read at once (split the file)`);
  const b = await readFile(file);
  return isGzipped(b) ? gunzipSync(b, { maxOutputLength: MAX_WHOLE_FILE_BYTES }) : b;
}

type Emit = (u: Unit) => Promise<void>;

function jsonUnit(file: string, at: number, v: unknown, raw: Uint8Array | null, problem: (p: Problem) => void): Unit | null {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    problem({ file, line: at, error: 'not a JSON object' });
    return null;
  }
  const doc = v as Record<string, unknown>;
  const signal = jsonSignal(doc);
  if (!signal) {
    problem({ file, line: at, error: 'not an OTLP export request: none of resourceSpans, resourceLogs, resourceMetrics, resourceProfiles' });
    return null;
  }
  return { kind: 'json', signal, file, at, doc, raw };
}

const parseError = (e: unknown) => `invalid JSON: ${(e as Error).message}`;

/** A JSON document that is not JSON lines: one request, or a list of them (each one unit, numbered from 1). */
async function readJsonDocument(file: string, emit: Emit, problem: (p: Problem) => void): Promise<boolean> {
  let v: unknown;
  try {
    v = JSON.parse((await readWhole(file)).toString('utf8').replace(/^\uFEFF/, ''));
  } catch {
    return false;
  }
  const list = Array.isArray(v) ? v : [v];
  for (const [i, x] of list.entries()) {
    const u = jsonUnit(file, i + 1, x, null, problem);
    if (u) await emit(u);
  }
  return true;
}

async function readJsonLines(file: string, emit: Emit, problem: (p: Problem) => void): Promise<void> {
  for await (const { n, bytes } of lines(file, MAX_LINE_BYTES)) {
    if (bytes === null) {
      problem({ file, line: n, error: `line longer than ${MAX_LINE_BYTES} bytes` });
      continue;
    }
    const text = bytes.toString('utf8');
    const t = n === 1 ? text.replace(/^\uFEFF/, '') : text;
    if (!t.trim()) continue;
    let v: unknown;
    try {
      v = JSON.parse(t);
    } catch (e) {
      // A document spread over lines (pretty-printed) is read whole; anything else is one bad line.
      if (n === 1 && (await readJsonDocument(file, emit, problem))) return;
      problem({ file, line: n, error: parseError(e) });
      continue;
    }
    if (Array.isArray(v)) {
      for (const x of v) {
        const u = jsonUnit(file, n, x, null, problem);
        if (u) await emit(u);
      }
      continue;
    }
    const u = jsonUnit(file, n, v, t.length === text.length ? bytes : Buffer.from(t), problem);
    if (u) await emit(u);
  }
}

async function readProtobuf(file: string, hint: Signal | null, emit: Emit, problem: (p: Problem) => void): Promise<void> {
  const b = await readWhole(file);
  const named = hint ?? signalFromName(file);
  let messages: Uint8Array[];
  try {
    const split = splitFile(b, named);
    messages = split.messages;
    const t = split.truncated;
    if (t) problem({ file, line: t.at, error: `truncated: the frame announces ${t.want} bytes, the file ends after ${t.have}` });
  } catch (err) {
    if (!(err instanceof WireError)) throw err;
    problem({ file, error: err.message });
    return;
  }
  for (const [i, m] of messages.entries()) {
    const at = i + 1;
    if (isCompressed(m)) {
      // The Collector file exporter with compression: each frame compressed on its own.
      if (!isGzipped(m)) {
        problem({ file, line: at, error: 'a zstd-compressed frame: Node 20 has no zstd; decompress the file first (zstd -d)' });
        continue;
      }
      let inner: Buffer;
      try {
        inner = gunzipSync(m, { maxOutputLength: MAX_LINE_BYTES });
      } catch (e) {
        problem({ file, line: at, error: `a gzip frame that does not decompress: ${(e as Error).message}` });
        continue;
      }
      if (firstByte(inner) === 0x7b) {
        let v: unknown;
        try {
          v = JSON.parse(inner.toString('utf8'));
        } catch (e) {
          problem({ file, line: at, error: parseError(e) });
          continue;
        }
        const u = jsonUnit(file, at, v, null, problem);
        if (u) await emit(u);
        continue;
      }
      const signal = signalOf(inner, named);
      if (!signal) problem({ file, line: at, error: 'cannot tell the signal of this request (name it with --signal)' });
      else await emit({ kind: 'proto', signal, file, at, bytes: inner });
      continue;
    }
    if (!m.length) continue; // an empty request holds nothing to send
    const signal = signalOf(m, named);
    if (!signal) problem({ file, line: at, error: 'cannot tell the signal of this request (name it with --signal)' });
    else await emit({ kind: 'proto', signal, file, at, bytes: m });
  }
}

/** Reads one file, handing each export request to `emit` in order and each problem to `problem`. */
export async function readRecording(file: string, hint: Signal | null, emit: Emit, problem: (p: Problem) => void): Promise<void> {
  try {
    const first = firstByte(await head(file));
    if (first === undefined) return; // empty
    if (first === 0x7b || first === 0x5b) await readJsonLines(file, emit, problem);
    else await readProtobuf(file, hint, emit, problem);
  } catch (err) {
    problem({ file, error: (err as Error).message });
  }
}
