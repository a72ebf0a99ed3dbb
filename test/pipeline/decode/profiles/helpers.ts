// Shared test helpers: corpus discovery and a tiny protobuf writer for hand-built profiles.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CORPORA_DIR } from '../../../../src/core/paths.js';
import { corpusPresent } from '../../../helpers/corpora.js';

export const PPROF_DIR = join(CORPORA_DIR, 'pprof');
export const OTLP_DIR = join(CORPORA_DIR, 'otlp', 'grafana-pyroscope');
export const HAVE_CORPORA = corpusPresent(PPROF_DIR) && corpusPresent(OTLP_DIR);

export function walk(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((f) => {
      const p = join(dir, f);
      return statSync(p).isDirectory() ? walk(p) : [p];
    });
}

// ---- protobuf writer ----
export function varint(v: number | bigint): number[] {
  let x = BigInt.asUintN(64, BigInt(v));
  const out: number[] = [];
  while (x >= 0x80n) {
    out.push(Number(x & 0x7fn) | 0x80);
    x >>= 7n;
  }
  out.push(Number(x));
  return out;
}

export const tag = (field: number, wt: number): number[] => varint(field * 8 + wt);
export const vfield = (field: number, v: number | bigint): number[] => [...tag(field, 0), ...varint(v)];
export const bfield = (field: number, body: number[] | Uint8Array): number[] => [...tag(field, 2), ...varint(body.length), ...body];
export const sfield = (field: number, s: string): number[] => bfield(field, [...new TextEncoder().encode(s)]);
export const packed = (field: number, vs: (number | bigint)[]): number[] => bfield(field, vs.flatMap((v) => varint(v)));
export const unpacked = (field: number, vs: (number | bigint)[]): number[] => vs.flatMap((v) => vfield(field, v));

export interface TinySample {
  locs: number[];
  values: number[];
  labels?: { key: string; str?: string; num?: number }[];
}

export interface TinyProfile {
  types?: [string, string][];
  samples: TinySample[];
  /** location id → lines as function names, innermost first (inlined frames) */
  locations: Record<number, string[]>;
  packed?: boolean;
  defaultType?: string;
  period?: [string, string, number];
  timeNanos?: bigint;
}

/** Encodes a profile.proto message; function ids are assigned per distinct name. */
export function encodeProfile(p: TinyProfile): Uint8Array {
  const strings = [''];
  const si = (s: string): number => {
    let i = strings.indexOf(s);
    if (i < 0) i = strings.push(s) - 1;
    return i;
  };
  const fnIds = new Map<string, number>();
  const fid = (name: string): number => {
    let id = fnIds.get(name);
    if (id === undefined) fnIds.set(name, (id = fnIds.size + 1));
    return id;
  };
  const rep = p.packed === false ? unpacked : packed;
  const out: number[] = [];
  for (const [t, u] of p.types ?? []) out.push(...bfield(1, [...vfield(1, si(t)), ...vfield(2, si(u))]));
  for (const s of p.samples) {
    const labels = (s.labels ?? []).flatMap((l) =>
      bfield(3, [...vfield(1, si(l.key)), ...(l.str !== undefined ? vfield(2, si(l.str)) : []), ...(l.num !== undefined ? vfield(3, l.num) : [])]),
    );
    out.push(...bfield(2, [...rep(1, s.locs), ...rep(2, s.values), ...labels]));
  }
  for (const [id, lines] of Object.entries(p.locations)) {
    const ls = lines.flatMap((name, i) => bfield(4, [...vfield(1, fid(name)), ...vfield(2, 10 + i)]));
    out.push(...bfield(4, [...vfield(1, Number(id)), ...vfield(3, 0x1000 + Number(id)), ...ls]));
  }
  for (const [name, id] of fnIds) out.push(...bfield(5, [...vfield(1, id), ...vfield(2, si(name)), ...vfield(4, si(name + '.go'))]));
  if (p.period) {
    out.push(...bfield(11, [...vfield(1, si(p.period[0])), ...vfield(2, si(p.period[1]))]));
    out.push(...vfield(12, p.period[2]));
  }
  if (p.timeNanos !== undefined) out.push(...vfield(9, p.timeNanos));
  if (p.defaultType) out.push(...vfield(14, si(p.defaultType)));
  for (const s of strings) out.push(...sfield(6, s));
  return Uint8Array.from(out);
}
