// The POSIX ustar archive, as far as a snapshot needs it: flat regular files. A snapshot travels as
// one tar (POST /v1/snapshot answers one, POST /v1/restore takes one), so `curl ... | tar x` works
// and a window moves in one request, consistent across its tables. The reader trusts nothing: every
// header's checksum, size and name is checked, and anything but a plain file name is refused.

const BLOCK = 512;

export interface TarEntry {
  name: string;
  data: Uint8Array;
}

export class TarError extends Error {}

/** A file name an archive may carry: one path segment of safe characters (no directory, no `..`). */
export const SAFE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$/;

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, '0') + '\0';
}

function header(name: string, size: number, mtimeS: number): Uint8Array {
  const h = new Uint8Array(BLOCK);
  const put = (s: string, at: number) => h.set(Buffer.from(s, 'latin1'), at);
  put(name, 0);
  put(octal(0o644, 8), 100);
  put(octal(0, 8), 108);
  put(octal(0, 8), 116);
  put(octal(size, 12), 124);
  put(octal(mtimeS, 12), 136);
  put('        ', 148); // the checksum counts its own field as spaces
  put('0', 156);
  put('ustar\u000000', 257);
  let sum = 0;
  for (const b of h) sum += b;
  put(octal(sum, 7) + ' ', 148);
  return h;
}

/** One archive of `entries`, in order. */
export function writeTar(entries: readonly TarEntry[], mtimeS = Math.floor(Date.now() / 1000)): Buffer {
  const parts: Uint8Array[] = [];
  for (const e of entries) {
    if (!SAFE_NAME.test(e.name)) throw new TarError(`unsafe archive member name ${JSON.stringify(e.name)}`);
    parts.push(header(e.name, e.data.length, mtimeS), e.data);
    const pad = (BLOCK - (e.data.length % BLOCK)) % BLOCK;
    if (pad) parts.push(new Uint8Array(pad));
  }
  parts.push(new Uint8Array(2 * BLOCK));
  return Buffer.concat(parts);
}

function field(b: Uint8Array, at: number, len: number): string {
  const s = Buffer.from(b.subarray(at, at + len)).toString('latin1');
  const nul = s.indexOf('\0');
  return nul >= 0 ? s.slice(0, nul) : s;
}

function readOctal(b: Uint8Array, at: number, len: number, what: string): number {
  const s = field(b, at, len).trim();
  if (!/^[0-7]+$/.test(s)) throw new TarError(`archive header ${what} is not an octal number`);
  const n = parseInt(s, 8);
  if (!Number.isSafeInteger(n)) throw new TarError(`archive header ${what} is out of range`);
  return n;
}

/** The regular files of an archive. Throws TarError on anything malformed, truncated or unsafe. */
export function readTar(buf: Uint8Array): TarEntry[] {
  const out: TarEntry[] = [];
  const names = new Set<string>();
  let at = 0;
  for (;;) {
    if (at + BLOCK > buf.length) throw new TarError('the archive is truncated (no end-of-archive blocks)');
    const h = buf.subarray(at, at + BLOCK);
    if (h.every((x) => x === 0)) return out;
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : h[i]!;
    if (readOctal(h, 148, 8, 'checksum') !== sum) throw new TarError(`archive header checksum mismatch at byte ${at}`);
    const name = field(h, 0, 100);
    const prefix = field(h, 345, 155);
    const type = String.fromCharCode(h[156]!);
    const size = readOctal(h, 124, 12, 'size');
    if (type !== '0' && type !== '\0') throw new TarError(`archive member ${JSON.stringify(name)} is not a regular file`);
    if (prefix || !SAFE_NAME.test(name)) throw new TarError(`unsafe archive member name ${JSON.stringify(prefix ? `${prefix}/${name}` : name)}`);
    if (names.has(name)) throw new TarError(`archive member ${name} appears twice`);
    names.add(name);
    const start = at + BLOCK;
    if (start + size > buf.length) throw new TarError(`archive member ${name} is truncated`);
    out.push({ name, data: buf.subarray(start, start + size) });
    at = start + Math.ceil(size / BLOCK) * BLOCK;
  }
}
