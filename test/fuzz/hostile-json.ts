// Hostile JSON, built from a valid document: at a few places its value is replaced by what a broken
// or malicious client sends (numbers past every integer type, wrong types, prototype-polluting keys,
// invalid hex ids, lone surrogates, deep arrays), keys are duplicated, or the text is cut or garbled.
// Documents are kept as trees of raw JSON text so that what JSON.stringify cannot write (1e400,
// duplicate keys, an own `__proto__` key) can be written.
import fc from 'fast-check';

export type Node = { t: 'obj'; entries: [string, Node][] } | { t: 'arr'; items: Node[] } | { t: 'raw'; text: string };

export function toNode(v: unknown): Node {
  if (Array.isArray(v)) return { t: 'arr', items: v.map(toNode) };
  if (v !== null && typeof v === 'object') return { t: 'obj', entries: Object.entries(v).map(([k, x]) => [k, toNode(x)]) };
  return { t: 'raw', text: JSON.stringify(v) ?? 'null' };
}

export function stringify(n: Node): string {
  if (n.t === 'raw') return n.text;
  if (n.t === 'arr') return '[' + n.items.map(stringify).join(',') + ']';
  return '{' + n.entries.map(([k, v]) => JSON.stringify(k) + ':' + stringify(v)).join(',') + '}';
}

const raw = (text: string): Node => ({ t: 'raw', text });

function deepArray(depth: number, leaf = '0'): Node {
  return raw('['.repeat(depth) + leaf + ']'.repeat(depth));
}

function deepObject(depth: number): Node {
  return raw('{"a":'.repeat(depth) + '1' + '}'.repeat(depth));
}

/** Values no field of an OTLP, push or diagnose request should take, but some client will send. */
export const HOSTILE_VALUES: readonly Node[] = [
  // numbers past every integer and float type, and the edge of safe integers
  raw('1e400'), raw('-1e400'), raw('18446744073709551616'), raw('18446744073709551615'), raw('-9223372036854775809'),
  raw('9007199254740993'), raw('123456789012345678901234567890123456789'), raw('-0'), raw('0.5'), raw('1e-400'), raw('-1'),
  raw('"18446744073709551616"'), raw('"-1"'), raw('"1e3"'), raw('"0x10"'), raw('"NaN"'), raw('"Infinity"'), raw('"-Infinity"'), raw('" 12"'), raw('""'),
  // wrong types
  raw('true'), raw('false'), raw('null'), raw('[]'), raw('{}'), raw('[null]'), raw('[{}]'), raw('{"":{}}'), raw('"x"'),
  // strings that are hard to handle
  raw('"\\ud800"'), raw('"\\udfff\\ud800"'), raw('"\\u0000"'), raw(JSON.stringify('é'.repeat(3000))), raw(JSON.stringify('x'.repeat(70_000))),
  raw('"__proto__"'), raw('"constructor"'), raw('"toString"'),
  // invalid hex ids (wrong length, odd length, not hex, full-width digits, upper case)
  raw('"zz"'), raw('"abc"'), raw('"0af7651916cd43dd8448eb211c80319"'), raw('"0af7651916cd43dd8448eb211c80319cc"'), raw('"0AF7651916CD43DD8448EB211C80319C"'),
  raw('"00000000000000000000000000000000"'), raw('"０１２３"'), raw('"0af7651916cd43dd8448eb211c80319g"'), raw('"CrZrcWkgMzE="'),
  // nesting
  deepArray(64), deepArray(1000), deepArray(20_000), deepObject(1000), deepObject(20_000),
  raw('{"__proto__":{"polluted":1}}'), raw('{"constructor":{"prototype":{"polluted":1}}}'),
];

/** Keys a client may add to any object. */
export const HOSTILE_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '', 'length'];

type Path = { parent: Node & { t: 'obj' | 'arr' }; index: number };

function places(n: Node, acc: Path[] = []): Path[] {
  if (n.t === 'obj') n.entries.forEach(([, v], index) => (acc.push({ parent: n, index }), places(v, acc)));
  else if (n.t === 'arr') n.items.forEach((v, index) => (acc.push({ parent: n, index }), places(v, acc)));
  return acc;
}

function objects(n: Node, acc: (Node & { t: 'obj' })[] = []): (Node & { t: 'obj' })[] {
  if (n.t === 'obj') acc.push(n);
  const kids = n.t === 'obj' ? n.entries.map((e) => e[1]) : n.t === 'arr' ? n.items : [];
  for (const k of kids) objects(k, acc);
  return acc;
}

function clone(n: Node): Node {
  if (n.t === 'raw') return n;
  if (n.t === 'arr') return { t: 'arr', items: n.items.map(clone) };
  return { t: 'obj', entries: n.entries.map(([k, v]) => [k, clone(v)]) };
}

function setAt(p: Path, v: Node): void {
  if (p.parent.t === 'obj') p.parent.entries[p.index]![1] = v;
  else p.parent.items[p.index] = v;
}

function getAt(p: Path): Node {
  return p.parent.t === 'obj' ? p.parent.entries[p.index]![1] : p.parent.items[p.index]!;
}

export type JsonOp =
  | { kind: 'replace'; pick: number; which: number }
  | { kind: 'key'; pick: number; which: number; value: number }
  | { kind: 'duplicate'; pick: number }
  | { kind: 'wrap'; pick: number; depth: number }
  | { kind: 'repeat'; pick: number; times: number };

export const jsonOpArb: fc.Arbitrary<JsonOp> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('replace' as const), pick: fc.nat(), which: fc.nat(HOSTILE_VALUES.length - 1) }), weight: 6 },
  fc.record({ kind: fc.constant('key' as const), pick: fc.nat(), which: fc.nat(HOSTILE_KEYS.length - 1), value: fc.nat(HOSTILE_VALUES.length - 1) }),
  fc.record({ kind: fc.constant('duplicate' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('wrap' as const), pick: fc.nat(), depth: fc.integer({ min: 1, max: 5000 }) }),
  fc.record({ kind: fc.constant('repeat' as const), pick: fc.nat(), times: fc.integer({ min: 2, max: 200 }) }),
);

export function applyJsonOp(doc: Node, op: JsonOp): Node {
  const root = clone(doc);
  const all = places(root);
  if (op.kind === 'key' || op.kind === 'duplicate') {
    const objs = objects(root);
    if (objs.length === 0) return root;
    const o = objs[op.pick % objs.length]!;
    if (op.kind === 'key') o.entries.push([HOSTILE_KEYS[op.which]!, HOSTILE_VALUES[op.value]!]);
    else if (o.entries.length) {
      // The same key again with another value: JSON.parse keeps the last.
      const [k] = o.entries[op.pick % o.entries.length]!;
      o.entries.push([k, HOSTILE_VALUES[op.pick % HOSTILE_VALUES.length]!]);
    }
    return root;
  }
  if (all.length === 0) return root;
  const p = all[op.pick % all.length]!;
  if (op.kind === 'replace') setAt(p, HOSTILE_VALUES[op.which]!);
  else if (op.kind === 'wrap') setAt(p, raw('['.repeat(op.depth) + stringify(getAt(p)) + ']'.repeat(op.depth)));
  else if (p.parent.t === 'arr') {
    // The same record many times over (a batch of copies).
    const item = p.parent.items[p.index]!;
    p.parent.items.splice(p.index, 0, ...new Array<Node>(op.times).fill(item));
  }
  return root;
}

/** Text-level damage: a cut, or a stray character. */
const textOpArb = fc.oneof(
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('char' as const), at: fc.nat(), ch: fc.constantFrom(...'{}[]":,0-9.eE+nulltrue\\ \u0000\u2028') }),
);

/** Hostile JSON text from valid documents: tree mutations, sometimes followed by text damage. */
export function hostileJson(seeds: fc.Arbitrary<unknown>): fc.Arbitrary<string> {
  return fc
    .tuple(seeds, fc.array(jsonOpArb, { minLength: 0, maxLength: 3 }), fc.option(textOpArb, { freq: 5 }))
    .map(([seed, ops, textOp]) => {
      const text = stringify(ops.reduce(applyJsonOp, toNode(seed)));
      if (!textOp) return text;
      const at = textOp.at % (text.length + 1);
      return textOp.kind === 'cut' ? text.slice(0, at) : text.slice(0, at) + textOp.ch + text.slice(at);
    });
}

/** Any JSON at all, for parsers that take a JSON body (fast-check's generator, plus the hostile values). */
export const anyJsonText: fc.Arbitrary<string> = fc.oneof(fc.json({ maxDepth: 4 }), fc.constantFrom(...HOSTILE_VALUES.map(stringify)));
