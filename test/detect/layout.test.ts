// assembly/bocpd.ts mirrors the flat layouts of src/detect/bocpd/layout.ts, and assembly/_seasonal.ts
// the seasonal context of timed.ts, profile.ts, envelope.ts and record.ts (AssemblyScript cannot
// import them): every constant it declares must equal its TypeScript source, so the two engines
// read the same parameter, state and event slots.
import { expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/core/paths.js';
import { E, EVENT_W, MODEL, P, R, S } from '../../src/detect/bocpd/layout.js';
import { T } from '../../src/detect/bocpd/timed.js';
import { F } from '../../src/detect/bocpd/profile.js';
import { SCALES, V, scaleOffset } from '../../src/detect/bocpd/envelope.js';
import { RECORD_RATIO, W } from '../../src/detect/bocpd/record.js';
import { instantiateWasm } from '../../src/compute/wasm.js';

const source = readFileSync(join(PACKAGE_ROOT, 'assembly', 'bocpd.ts'), 'utf8');
const tables: Record<string, Record<string, number>> = { MODEL, P, S, R, E };

it('every layout constant the WASM module declares equals the TypeScript one', () => {
  const declared = [...source.matchAll(/^const (MODEL|P|S|R|E)_([A-Z0-9]+): i32 = (\d+);$/gm)];
  expect(declared.length).toBeGreaterThan(40);
  for (const [line, table, name, value] of declared) {
    const key = Object.keys(tables[table!]!).find((k) => k.toUpperCase() === name);
    expect(key, `${line}: no ${table}.${name!.toLowerCase()} in layout.ts`).toBeDefined();
    expect(Number(value), line).toBe(tables[table!]![key!]);
  }
  expect(Number(/^const EVENT_W: i32 = (\d+);$/m.exec(source)?.[1])).toBe(EVENT_W);
});

it('every seasonal context constant the WASM reading declares equals the TypeScript one, and so do the envelope scales and the record margin', () => {
  const seasonal = readFileSync(join(PACKAGE_ROOT, 'assembly', '_seasonal.ts'), 'utf8');
  const contexts: Record<string, Record<string, number>> = { T, F, V, W };
  const declared = [...seasonal.matchAll(/^const (T|F|V|W)_([A-Z0-9]+): i32 = (\d+);$/gm)];
  expect(declared.length).toBeGreaterThan(30);
  expect(declared.filter(([, table]) => table === 'W').length).toBe(Object.keys(W).length);
  expect(Number(/^const RECORD_RATIO: f64 = ([\d.e+-]+);$/m.exec(seasonal)?.[1])).toBe(RECORD_RATIO);
  for (const [line, table, name, value] of declared) {
    const key = Object.keys(contexts[table!]!).find((k) => k.toUpperCase() === name);
    expect(key, `${line}: no ${table}.${name!.toLowerCase()}`).toBeDefined();
    expect(Number(value), line).toBe(contexts[table!]![key!]);
  }
  const wasm = instantiateWasm<{ seasonalScaleAt(j: number): number }>('bocpd');
  for (let j = 0; j < SCALES; j++) expect(wasm.seasonalScaleAt(j), `scale ${j}`).toBe(scaleOffset(j));
  expect(wasm.seasonalScaleAt(SCALES)).toBe(V.size);
});
