// A small filesystem of its own for tests that fill a disk: a tmpfs mounted on a fresh directory.
// Mounting needs root (and a kernel or container that allows it); when it is refused the test that
// wanted it skips, and `refused` says why.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, statfsSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Tmpfs {
  dir: string;
  /** Why no filesystem could be mounted (the test skips), or null when `dir` is one. */
  refused: string | null;
  /** Unmounts and removes the directory. */
  cleanup(): void;
}

export function mountTmpfs(size: string): Tmpfs {
  const dir = mkdtempSync(join(tmpdir(), 'tds-tmpfs-'));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  if (process.getuid?.() !== 0) return { dir, refused: 'not root: cannot mount a tmpfs', cleanup: remove };
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    return { dir, refused: `mount -t tmpfs refused: ${String((err as { stderr?: unknown }).stderr ?? err).trim()}`, cleanup: remove };
  }
  return {
    dir,
    refused: null,
    cleanup() {
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
      remove();
    },
  };
}

export function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return Number(s.bavail) * Number(s.bsize);
}

/** Writes a ballast file that leaves about `leave` bytes free on `dir`'s filesystem (less if the disk is busy). */
export function fillLeaving(dir: string, file: string, leave: number): void {
  const size = Math.max(0, freeBytes(dir) - leave);
  const chunk = Buffer.alloc(Math.min(size, 8 * 1024 * 1024), 0x5a);
  writeFileSync(file, '');
  let done = 0;
  try {
    for (; done < size; done += chunk.length) writeFileSync(file, size - done >= chunk.length ? chunk : chunk.subarray(0, size - done), { flag: 'a' });
  } catch (err) {
    // The server wrote meanwhile and the disk filled first: give back `leave` bytes.
    if ((err as { code?: string }).code !== 'ENOSPC') throw err;
    truncateSync(file, Math.max(0, statSync(file).size - leave));
  }
}
