// The WASM engine and the TypeScript reference must produce identical output — ids, flags, parameter
// ranges and numeric values, changed / evicted lists and patterns — on every Loghub line, with and
// without eviction pressure, and on generated hostile input.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_PARAMS, type CoreOutput, type MinerCore } from '../../../src/pipeline/logminer/core.js';
import { loadAllLoghub, LOGHUB_DIR } from '../../../testkit/log-parsing-eval.js';
import { ReferenceCore } from '../../../src/pipeline/logminer/reference.js';
import { WasmCore } from '../../../src/pipeline/logminer/wasm-core.js';
import { corpusPresent } from '../../helpers/corpora.js';

const HAVE_LOGHUB = corpusPresent(join(LOGHUB_DIR, 'settings.txt'));

function run(core: MinerCore, svc: number, bodies: Uint8Array[]): CoreOutput & { patterns: Map<number, string> } {
  const total = bodies.reduce((a, b) => a + b.length, 0);
  const input = core.prepare(total, bodies.length);
  let pos = 0;
  bodies.forEach((b, i) => {
    input.offsets[i] = pos;
    input.bytes.set(b, pos);
    pos += b.length;
  });
  input.offsets[bodies.length] = pos;
  const o = core.mine(svc, bodies.length);
  const n = bodies.length;
  const copy = {
    ids: o.ids.slice(0, n),
    flags: o.flags.slice(0, n),
    splitFrom: o.splitFrom.slice(0, n),
    paramCount: o.paramCount.slice(0, n),
    paramSlot: o.paramSlot.slice(0, n * MAX_PARAMS),
    paramStart: o.paramStart.slice(0, n * MAX_PARAMS),
    paramLen: o.paramLen.slice(0, n * MAX_PARAMS),
    paramNum: o.paramNum.slice(0, n * MAX_PARAMS),
    changed: o.changed.slice(0, o.changedCount),
    changedCount: o.changedCount,
    evicted: o.evicted.slice(0, o.evictedCount),
    evictedInto: o.evictedInto.slice(0, o.evictedCount),
    evictedCount: o.evictedCount,
    patterns: new Map<number, string>(),
  };
  for (const id of [...copy.changed, ...copy.evicted]) copy.patterns.set(id, Buffer.from(core.patternBytes(id) ?? []).toString('latin1'));
  return copy;
}

/** Whether line `i` has the same output in both (only the meaningful parameter entries). */
function sameLine(a: ReturnType<typeof run>, b: ReturnType<typeof run>, i: number): boolean {
  if (a.ids[i] !== b.ids[i] || a.flags[i] !== b.flags[i] || a.splitFrom[i] !== b.splitFrom[i] || a.paramCount[i] !== b.paramCount[i]) return false;
  for (let k = i * MAX_PARAMS; k < i * MAX_PARAMS + a.paramCount[i]!; k++) {
    if (a.paramSlot[k] !== b.paramSlot[k] || a.paramStart[k] !== b.paramStart[k] || a.paramLen[k] !== b.paramLen[k] || !Object.is(a.paramNum[k], b.paramNum[k])) return false;
  }
  return true;
}

/**
 * Compares two outputs line by line, failing with the first line that differs. Lines are compared
 * directly and only a differing one goes through expect (an expect per value is slow on 32,000 lines).
 */
function expectSame(a: ReturnType<typeof run>, b: ReturnType<typeof run>, bodies: Uint8Array[], where: string): void {
  for (let i = 0; i < bodies.length; i++) {
    if (sameLine(a, b, i)) continue;
    const ctx = `${where} line ${i}: ${Buffer.from(bodies[i]!.subarray(0, 200)).toString('latin1')}`;
    const params = (o: typeof a) =>
      Array.from({ length: o.paramCount[i]! }, (_, j) => i * MAX_PARAMS + j).map((k) => [o.paramSlot[k], o.paramStart[k], o.paramLen[k], Object.is(o.paramNum[k], -0) ? '-0' : o.paramNum[k]]);
    const line = (o: typeof a) => ({ id: o.ids[i], flags: o.flags[i], splitFrom: o.splitFrom[i], paramCount: o.paramCount[i], params: params(o) });
    expect(line(a), ctx).toEqual(line(b));
    expect.unreachable(`${ctx}: differs`);
  }
  expect(Array.from(a.changed), where).toEqual(Array.from(b.changed));
  expect(Array.from(a.evicted), where).toEqual(Array.from(b.evicted));
  expect(Array.from(a.evictedInto), where).toEqual(Array.from(b.evictedInto));
  expect(a.patterns, where).toEqual(b.patterns);
}

/** Templates split off and merged away when the reference miner takes `batches`: that generated input reaches those rules. */
function splitsAndMerges(batches: { svc: number; bodies: Uint8Array[] }[]): { splits: number; merges: number } {
  const r = new ReferenceCore({ maxTemplatesPerService: 2000 });
  let splits = 0;
  let merges = 0;
  for (const { svc, bodies } of batches) {
    const o = run(r, svc, bodies);
    splits += o.splitFrom.filter((x) => x > 0).length;
    merges += o.evictedInto.filter((x) => x > 0).length;
  }
  return { splits, merges };
}

function agree(batches: { svc: number; bodies: Uint8Array[] }[], cap: number, similarityTenths?: number, enumMax?: number): void {
  const w = new WasmCore({ maxTemplatesPerService: cap, similarityTenths, enumMax });
  const r = new ReferenceCore({ maxTemplatesPerService: cap, similarityTenths, enumMax });
  batches.forEach(({ svc, bodies }, bi) => expectSame(run(w, svc, bodies), run(r, svc, bodies), bodies, `batch ${bi} svc ${svc}`));
  expect(w.nextId()).toBe(r.nextId());
}

const enc = new TextEncoder();

describe.skipIf(!HAVE_LOGHUB)('WASM and reference agree on every Loghub line', () => {
  const datasets = HAVE_LOGHUB ? loadAllLoghub() : [];
  const batches = (size: number) =>
    datasets.flatMap((ds, svc) => {
      const out: { svc: number; bodies: Uint8Array[] }[] = [];
      for (let i = 0; i < ds.contents.length; i += size) out.push({ svc, bodies: ds.contents.slice(i, i + size).map((c) => enc.encode(c)) });
      return out;
    });
  it('with the default cap', () => agree(batches(500), 2000));
  it('under eviction pressure (cap 10, small batches)', () => agree(batches(97), 10));
  it('one service for all datasets (cross-dataset leaves)', () => agree(batches(1000).map((b) => ({ ...b, svc: 0 })), 2000));
  it('at the other similarity thresholds eval:logs tries (0.5, 0.9)', () => {
    agree(batches(2000), 2000, 5);
    agree(batches(2000), 2000, 9);
  });
  it('at the extreme distinct-word bounds eval:logs tries (3, 8)', () => {
    agree(batches(2000), 2000, undefined, 3);
    agree(batches(2000), 2000, undefined, 8);
  });
});

if (!HAVE_LOGHUB) {
  describe('WASM and reference agree on every Loghub line', () => {
    it.skip(`skipped: ${LOGHUB_DIR} is absent (the shared corpora are not beside this checkout)`, () => {});
  });
}

describe('WASM and reference agree on generated hostile input', () => {
  // deterministic xorshift PRNG
  let seed = 0x9e3779b9;
  const rnd = (n: number): number => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) % n;
  };
  const pieces = [
    'user', 'id=', '42', '0x1f', 'a3bb189e', '/var/log/x', 'http://h:80/p', 'a@b.co', '"q"', "'s'", '(', ')', '[', ']', '{', '}',
    ':', '=', ',', ';', '<*>', '<', '>', '*', '-1.5e3', '12ms', '99%', 'node-7', 'blk_-9', 'core.3', '\\', '#', '!', '?', '&', '|',
    'ünï', '\u0000', '\t', '..', '../x', '~/y', './z', 'k:/p', 'f(/a/b)', 'x.y.z', 'a_b_1', 'A1B2C3D4E5', '{"a":1}', '[1,2]', '"',
    // quoted strings with spaces, addresses, dates, host names (the rules that see across bytes)
    '"a b"', 'm="x 1 y"', 'k:"p q"', '"open', 'end"', '\\"', '"\n"', 'fe80::1', '[::1]:80', '::', 'aa:bb:cc:dd:ee:0f', '2001:db8::',
    '10/Oct/2000:13:55:36', '5-Jan-2024', 'Jan', 'api.example.com', 'x.io', 'a.com:443', '.com', 'b-1.internal',
    // the words of dates written in words
    ' Sun ', ' July, ', ' 17 ', ' 2005 ', ' 23:21:54 ', ' PDT ', ' wednesday. ', ' MAY ',
  ];
  const line = (): Uint8Array => {
    const kind = rnd(10);
    if (kind === 0) {
      const b = new Uint8Array(rnd(300));
      for (let i = 0; i < b.length; i++) b[i] = rnd(256);
      return b;
    }
    if (kind === 1) {
      const keys = ['a', 'b', 'msg', 'n'];
      const parts = Array.from({ length: 1 + rnd(4) }, () => `"${keys[rnd(4)]}":${['1', '"x y"', '[1,{"z":2}]', '{"d":{"e":3}}', 'true', '<*>'][rnd(6)]}`);
      return enc.encode(`${rnd(3) === 0 ? ' ' : ''}{${parts.join(',')}}${rnd(5) === 0 ? 'x' : ''}`);
    }
    const n = kind === 2 ? 100 + rnd(200) : 1 + rnd(12);
    let s = '';
    for (let i = 0; i < n; i++) {
      let tok = '';
      const k = 1 + rnd(3);
      for (let j = 0; j < k; j++) tok += pieces[rnd(pieces.length)]!;
      s += tok + [' ', ' ', '  ', '\t'][rnd(4)]!;
    }
    if (kind === 3) s = s.repeat(20);
    return enc.encode(s);
  };
  it('random token soup, binary, JSON-like, long lines, with eviction', () => {
    const batches = Array.from({ length: 60 }, (_, i) => ({ svc: i % 3, bodies: Array.from({ length: 50 }, line) }));
    agree(batches, 25);
  });
  it('a flood of unique lines sharing one leaf (leaf bound and evictions)', () => {
    const word = (): string => Array.from({ length: 3 + rnd(5) }, () => String.fromCharCode(97 + rnd(26))).join('');
    const batches = Array.from({ length: 6 }, () => ({
      svc: 0,
      bodies: Array.from({ length: 100 }, () => enc.encode('event ' + Array.from({ length: 12 }, word).join(' '))),
    }));
    agree(batches, 2000);
  });
  it('enum-like words and variable runs of varying length (splits, merges across lengths)', () => {
    const words = ['Started', 'Stopped', 'Paused', 'Resumed', 'Failed', 'Queued', 'create', 'delete', 'GET', 'POST', 'alice', 'bob', 'carol'];
    const vals = ['42', '10.0.0.1', '12ms', 'node-3', 'x=1', 'tz=UTC', '2024-03-05', '10:00:00', 'vol-0a1b2c3d', '"a b 7"', '-', '(1.2', 'KB)'];
    const varRun = (): string => Array.from({ length: 1 + rnd(4) }, () => vals[rnd(vals.length)]!).join(' ');
    const shapes = [
      () => `Job ${varRun()} ${words[rnd(6)]} on ${varRun()}`,
      () => `Took ${varRun()} s to ${words[6 + rnd(2)]} the volume ${varRun()}`,
      () => `${varRun()} ${words[8 + rnd(2)]} /api/${rnd(9)} ${varRun()}`,
      () => `session opened for ${words[rnd(words.length)]} from ${varRun()} via ssh`,
      () => `copied ${varRun()} files to ${rnd(2) ? words[rnd(words.length)] : varRun()}`,
    ];
    const batches = Array.from({ length: 30 }, (_, i) => ({ svc: i % 2, bodies: Array.from({ length: 40 }, () => enc.encode(shapes[rnd(shapes.length)]!())) }));
    agree(batches, 2000);
    agree(batches, 12);
    // the input does reach the new rules: splits, and merges (same length and across lengths)
    const { splits, merges } = splitsAndMerges(batches);
    expect(splits).toBeGreaterThan(10);
    expect(merges).toBeGreaterThan(10);
  });
  it('words in two or three positions, non-word values where words were, phrases after a lone word', () => {
    const few = ['queued', 'running', 'done', 'failed'];
    const many = ['alpha', 'beta', 'gamma', 'delta', 'omega', 'red', 'blue', 'green', 'north', 'south', 'notes.txt', 'q1', 'a_b', '42', 'eth0', 'eth1', 'SOCKS5', 'init.', 'TASK_ABORT', 'x-y'];
    const phraseWords = ['metrics', 'system', 'shuffle', 'handler', 'the', 'block', 'scanner', 'web', 'server', 'lease', 'monitor'];
    const pick = (xs: string[]): string => xs[rnd(xs.length)]!;
    const shapes = [
      () => `job ${rnd(999)} moved from ${pick(few)} to ${pick(few)} by scheduler`,
      () => `user ${rnd(99)} renamed file ${pick(many)} to ${pick(many)} in project main`,
      () => `sync of volume vol-${rnd(9)} failed: ${pick(many)} is ${pick(rnd(2) ? few : many)} now`,
      () => `copy ${pick(few)} ${pick(many)} ${pick(few)} done for tenant ${rnd(9)} in region eu`,
      () => `Starting ${Array.from({ length: 1 + rnd(4) }, () => pick(phraseWords)).join(' ')}`,
      // a field written as key=value makes the word after its name a value
      () => (rnd(3) ? `session for user ${pick(few)} ${pick(few)} from 10.0.0.${rnd(9)}` : `auth failure; uid=${rnd(9)} ${pick(['user', 'state', 'x'])}=${pick(few)}`),
    ];
    const batches = Array.from({ length: 30 }, (_, i) => ({ svc: i % 2, bodies: Array.from({ length: 40 }, () => enc.encode(shapes[rnd(shapes.length)]!())) }));
    agree(batches, 2000);
    agree(batches, 12);
    agree(batches, 2000, 5);
    // the input reaches the rules: splits by two or more words, merges of families and phrases
    const { splits, merges } = splitsAndMerges(batches);
    expect(splits).toBeGreaterThan(10);
    expect(merges).toBeGreaterThan(10);
  });
  it('phrases of plain words, request lines and lines of a retired length (phrase merges, run covers)', () => {
    const words = ['connection', 'reset', 'by', 'peer', 'no', 'route', 'to', 'host', 'is', 'down', 'broken', 'pipe', "can't", 'read-only', 'file.', 'done,'];
    const methods = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'];
    const phrase = (): string => Array.from({ length: 1 + rnd(5) }, () => words[rnd(words.length)]!).join(' ');
    const shapes = [
      () => `connect to db-${rnd(9)} failed: ${phrase()}`,
      () => `task ${rnd(99)} aborted because ${phrase()} (will retry)`,
      () => `${phrase()} after ${rnd(50)} ms`,
      () => `10.0.0.${rnd(9)} - - [12/Jan/2025:08:00:0${rnd(9)} +0100] "${methods[rnd(rnd(2) ? 2 : 7)]} /a/${rnd(9)} HTTP/1.${rnd(2)}" ${200 + rnd(4)} ${rnd(999)}`,
      () => `copied ${Array.from({ length: 1 + rnd(3) }, () => rnd(99)).join(' ')} files to ${rnd(3) ? words[rnd(words.length)] : 'tmp-' + rnd(9)}`,
    ];
    const batches = Array.from({ length: 30 }, (_, i) => ({ svc: i % 2, bodies: Array.from({ length: 40 }, () => enc.encode(shapes[rnd(shapes.length)]!())) }));
    agree(batches, 2000);
    agree(batches, 12);
    // the input reaches the rules: merges into a template ending in a `<*>` run after a constant word
    const r = new ReferenceCore({ maxTemplatesPerService: 2000 });
    let merges = 0;
    const patterns: string[] = [];
    for (const { svc, bodies } of batches) {
      const o = run(r, svc, bodies);
      merges += o.evictedInto.filter((x) => x > 0).length;
      patterns.push(...o.patterns.values());
    }
    expect(merges).toBeGreaterThan(10);
    expect(patterns).toContain('connect to db-<*> failed: <*>');
  });
  it('optional parts inside variables, words of dates, values that change form (loose covers)', () => {
    const pick = (xs: string[]): string => xs[rnd(xs.length)]!;
    const size = (): string => `${rnd(9999)} bytes${rnd(2) ? ` (${rnd(99)}.${rnd(9)} ${pick(['KB', 'MB'])})` : ''}`;
    const dur = (): string => pick([`${rnd(60)}:${rnd(60)}`, `<${1 + rnd(3)} sec`, `${rnd(9)} min ${rnd(60)} sec`, '-']);
    const day = (): string => `${pick(['Mon', 'Tue', 'Sunday,', 'fri'])} ${pick(['Jan', 'March', 'dec.'])} ${1 + rnd(28)} ${rnd(24)}:${rnd(60)}:${rnd(60)} ${pick(['UTC ', 'PDT ', ''])}${2000 + rnd(30)}`;
    const shapes = [
      () => `conn ${rnd(255)}.1.1.${rnd(255)}:${rnd(9999)} closed, ${size()} out, ${size()} in, lifetime ${dur()}`,
      () => `conn ${rnd(255)}.1.1.${rnd(255)}:443 via proxy ${pick(['HTTPS', 'SOCKS5', 'socks4a'])}`,
      () => `login from 10.0.${rnd(9)}.${rnd(9)} ${rnd(2) ? `(${pick(['', 'h.example.com', 'x'])}) ` : ''}at ${day()}`,
      () => `Received block blk_${rnd(99999)} ${rnd(2) ? `src: /10.0.0.${rnd(9)}:${rnd(99)} dest: /10.0.0.${rnd(9)}:${rnd(99)} ` : ''}of size ${rnd(9999)}${rnd(2) ? ` from /10.1.1.${rnd(9)}` : ''}`,
      () => `user ${pick(['alice', 'bob'])} ${rnd(2) ? 'not ' : ''}locked after ${rnd(9)} tries ${rnd(3) ? '' : `(${rnd(9)} ms)`}`,
    ];
    const batches = Array.from({ length: 30 }, (_, i) => ({ svc: i % 2, bodies: Array.from({ length: 40 }, () => enc.encode(shapes[rnd(shapes.length)]!())) }));
    agree(batches, 2000);
    agree(batches, 12);
    agree(batches, 2000, 5);
    // the input reaches the rule: the closed connections, of many lengths, are a few templates
    const closed = run(new ReferenceCore({ maxTemplatesPerService: 2000 }), 0, Array.from({ length: 200 }, () => enc.encode(shapes[0]!())));
    expect(new Set(closed.ids).size).toBeLessThanOrEqual(3);
  });
  it('restored state agrees', () => {
    const w = new WasmCore({ maxTemplatesPerService: 5 });
    const r = new ReferenceCore({ maxTemplatesPerService: 5 });
    const patterns = ['a <*> b', '{"k":<*>,"m":[<*>]}', 'x=<*> y', '', 'dup', 'dup', '{"bad": 1', 'p q r s t', 'say "two words" <*>', 'q "open x'];
    patterns.forEach((p, i) => {
      w.restore(i % 2, 10 + i, enc.encode(p));
      r.restore(i % 2, 10 + i, enc.encode(p));
    });
    for (let i = 10; i < 20; i++) expect(w.patternBytes(i), `id ${i}`).toEqual(r.patternBytes(i));
    const bodies = ['a 1 b', '{"k":2,"m":[]}', 'x=3 y', 'dup', 'p q r s u', '{"bad": 1', 'say "two words" 7', 'q "open y'].map((s) => enc.encode(s));
    expectSame(run(w, 0, bodies), run(r, 0, bodies), bodies, 'restored svc 0');
    expectSame(run(w, 1, bodies), run(r, 1, bodies), bodies, 'restored svc 1');
  });
});
