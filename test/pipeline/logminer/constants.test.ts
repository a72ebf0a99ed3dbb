// The constants and name lists the WASM engine (assembly/logminer.ts) shares with the TypeScript side
// (core.ts, mask.ts, dates.ts, chars.ts) are written twice, once per language: this test reads the
// AssemblyScript source and fails when a value, a list or a byte class differs, or when the
// AssemblyScript side declares a constant the TypeScript side does not have.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../../src/core/paths.js';
import * as core from '../../../src/pipeline/logminer/core.js';
import { isDelim } from '../../../src/pipeline/logminer/chars.js';
import { MONTH_NAMES, WEEKDAY_NAMES } from '../../../src/pipeline/logminer/dates.js';
import { TLDS } from '../../../src/pipeline/logminer/mask.js';

const as = readFileSync(join(PACKAGE_ROOT, 'assembly', 'logminer.ts'), 'utf8');

/** The `const NAME: type = value;` declarations of the AssemblyScript constants section. */
function asConstants(): Map<string, number> {
  const section = as.slice(as.indexOf('// ---- constants'), as.indexOf('// ---- buffers'));
  const out = new Map<string, number>();
  for (const m of section.matchAll(/^const ([A-Z_]+): \w+ = (\d+);/gm)) out.set(m[1]!, Number(m[2]));
  return out;
}

/** The string literals of the array assigned to `const <name> = [...]` in the AssemblyScript source. */
function asList(name: string): string[] {
  const m = new RegExp(`const ${name} = \\[([^\\]]*)\\]`).exec(as);
  expect(m, `assembly/logminer.ts declares ${name}`).not.toBeNull();
  return [...m![1]!.matchAll(/'([^']*)'/g)].map((x) => x[1]!);
}

describe('the log miner constants agree between assembly/logminer.ts and the TypeScript side', () => {
  it('every AssemblyScript constant equals core.ts', () => {
    const c = asConstants();
    expect(c.size).toBeGreaterThanOrEqual(15);
    const ts = core as unknown as Record<string, unknown>;
    for (const [name, v] of c) expect(ts[name], name).toBe(v);
  });

  it('the defaults of the settings init() takes equal SIM_NUM and ENUM_MAX', () => {
    expect(Number(/^let simNum: i64 = (\d+);/m.exec(as)?.[1])).toBe(core.SIM_NUM);
    expect(Number(/^let enumMax: i32 = (\d+);/m.exec(as)?.[1])).toBe(core.ENUM_MAX);
  });

  it('the top-level domains and the weekday and month names are the same lists', () => {
    expect(asList('tlds')).toEqual([...TLDS]);
    expect(asList('monthNames')).toEqual(MONTH_NAMES);
    expect(asList('weekdayNames')).toEqual(WEEKDAY_NAMES);
  });

  it('the delimiter bytes are the same', () => {
    const init = as.slice(as.indexOf('function initClasses'), as.indexOf('initClasses();'));
    const sw = init.slice(init.indexOf('switch (c)'), init.indexOf('delim = true'));
    const asDelims = [...sw.matchAll(/case (\d+):/g)].map((m) => Number(m[1])).sort((a, b) => a - b);
    const tsDelims = Array.from({ length: 256 }, (_, c) => c).filter(isDelim);
    expect(asDelims).toEqual(tsDelims);
  });
});
