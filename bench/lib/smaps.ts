// Where a process's resident memory is, from /proc/<pid>/smaps, in the classes that told the
// overload runs apart (bench/README.md, bench:overload): glibc's main heap and its other arenas
// (mapped 64 MiB-aligned, at most 64 MiB each), anonymous mappings by size (DuckDB's jemalloc
// extents are the large ones; V8's heaps and the workers' WASM memories mostly the middle), and
// file-backed pages (code, libraries).
import { readFileSync } from 'node:fs';

export type MemoryClass = 'main heap' | 'arenas' | 'anon ≥64M' | 'anon 2-64M' | 'anon <2M' | 'files';
/** Resident bytes by class. */
export type MemoryClasses = Partial<Record<MemoryClass, number>>;

const MiB = 2 ** 20;
const ARENA = 64 * MiB;

function classOf(start: bigint, size: number, name: string): MemoryClass {
  if (name === '[heap]') return 'main heap';
  if (name.startsWith('/')) return 'files';
  if (start % BigInt(ARENA) === 0n && size <= ARENA) return 'arenas';
  if (size >= ARENA) return 'anon ≥64M';
  return size >= 2 * MiB ? 'anon 2-64M' : 'anon <2M';
}

/** Resident bytes by class; empty when the process is gone or /proc is not there. */
export function memoryClasses(pid: number): MemoryClasses {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return {};
  }
  const out: MemoryClasses = {};
  let current: MemoryClass | null = null;
  for (const line of text.split('\n')) {
    const range = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (range) {
      const start = BigInt(`0x${range[1]}`);
      current = classOf(start, Number(BigInt(`0x${range[2]}`) - start), range[3]!.trim());
    } else if (current && line.startsWith('Rss:')) {
      out[current] = (out[current] ?? 0) + Number(/(\d+)/.exec(line)![1]) * 1024;
    }
  }
  return out;
}

/** `main heap 190, arenas 65, ...` in MiB, largest first. */
export function memoryClassesText(classes: MemoryClasses): string {
  return Object.entries(classes)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${Math.round(v / MiB)}`)
    .join(', ');
}
