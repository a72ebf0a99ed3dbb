// bench/lib/smaps.ts: this process's resident memory by class adds up to its RSS, and a large
// anonymous allocation lands in the class for mappings of its size.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { memoryClasses, memoryClassesText } from '../../bench/lib/smaps.js';

const MiB = 2 ** 20;
const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) * 1024;
const total = (c: ReturnType<typeof memoryClasses>) => Object.values(c).reduce((a, b) => a + b, 0);

describe.runIf(process.platform === 'linux')('memory classes from smaps', () => {
  it('adds up to the RSS, and puts a touched 256 MiB buffer among the large anonymous mappings', () => {
    const before = memoryClasses(process.pid);
    expect(Math.abs(total(before) - rss()) / rss()).toBeLessThan(0.1);
    expect(before.files).toBeGreaterThan(0);
    const big = Buffer.alloc(256 * MiB, 1); // zero-filled then written: every page resident
    const after = memoryClasses(process.pid);
    expect((after['anon ≥64M'] ?? 0) - (before['anon ≥64M'] ?? 0)).toBeGreaterThan(200 * MiB);
    // The text lists every class, largest first (what else this worker holds varies with the tests it ran).
    const listed = memoryClassesText(after).split(', ').map((part) => Number(part.split(' ').at(-1)));
    expect(listed).toHaveLength(Object.keys(after).length);
    expect(listed).toEqual([...listed].sort((a, b) => b - a));
    expect(memoryClassesText(after)).toMatch(/(^|, )anon ≥64M \d+/);
    expect(big[big.length - 1]).toBe(1);
  });

  it('is empty for a process that is not there', () => {
    expect(memoryClasses(2 ** 30)).toEqual({});
  });
});
