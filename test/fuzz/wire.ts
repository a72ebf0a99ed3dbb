// Structure-aware mutations of protobuf messages, for fuzzing the hand-written decoders. A valid
// message is parsed into its field tree (a length-delimited field whose payload parses as a message
// is taken for one; strings that happen to parse are mutated as messages too, which is fine), then
// mutated the ways a hostile or broken client would: length prefixes that lie or overflow, wrong
// wire types, field numbers out of range, fields repeated or dropped, payloads swapped between
// fields, varints that never end, deep self-nesting, bit flips, truncation, inserted garbage.
import fc from 'fast-check';
import { varint } from '../pipeline/decode/profiles/helpers.js';

export interface Field {
  no: number;
  wt: number;
  /** Raw bytes of the value: the varint, the 4/8 fixed bytes, or a LEN payload (when no children). */
  raw: Uint8Array;
  children?: Field[];
  /** Overrides for the tag and the length prefix, set by mutations (the bytes written as they are). */
  tag?: number[];
  len?: number[];
}


const MAX_PARSE_DEPTH = 40;
/** Mutants stay under this size (the server's body limit is far above; decoders are linear). */
export const MAX_MUTANT_BYTES = 256 * 1024;

/** The fields of `b`, or null when it is not exactly a sequence of well-formed fields. */
export function parseFields(b: Uint8Array, depth = 0): Field[] | null {
  const out: Field[] = [];
  let i = 0;
  const readVarint = (): bigint | null => {
    let v = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (i >= b.length) return null;
      const c = b[i++]!;
      v |= BigInt(c & 0x7f) << shift;
      if (c < 0x80) return v;
    }
    return null;
  };
  while (i < b.length) {
    const key = readVarint();
    if (key === null) return null;
    const no = Number(key >> 3n);
    const wt = Number(key & 7n);
    if (no === 0 || no >= 2 ** 29) return null;
    const start = i;
    if (wt === 0) {
      if (readVarint() === null) return null;
      out.push({ no, wt, raw: b.subarray(start, i) });
    } else if (wt === 1 || wt === 5) {
      i += wt === 1 ? 8 : 4;
      if (i > b.length) return null;
      out.push({ no, wt, raw: b.subarray(start, i) });
    } else if (wt === 2) {
      const n = readVarint();
      if (n === null || n > BigInt(b.length - i)) return null;
      const payload = b.subarray(i, i + Number(n));
      i += Number(n);
      const children = payload.length > 0 && depth < MAX_PARSE_DEPTH ? parseFields(payload, depth + 1) : null;
      out.push(children ? { no, wt, raw: payload, children } : { no, wt, raw: payload });
    } else return null;
  }
  return out;
}

export function serialize(fields: readonly Field[]): Uint8Array {
  const out: Uint8Array[] = [];
  let total = 0;
  const push = (u: Uint8Array | number[]) => {
    const a = u instanceof Uint8Array ? u : Uint8Array.from(u);
    out.push(a);
    total += a.length;
  };
  for (const f of fields) {
    push(f.tag ?? varint(f.no * 8 + f.wt));
    if (f.wt === 2 || f.len) {
      const payload = f.children ? serialize(f.children) : f.raw;
      push(f.len ?? varint(payload.length));
      push(payload);
    } else push(f.raw);
  }
  const b = new Uint8Array(total);
  let at = 0;
  for (const a of out) {
    b.set(a, at);
    at += a.length;
  }
  return b;
}

interface Slot {
  list: Field[];
  index: number;
}

function slots(fields: Field[], acc: Slot[] = []): Slot[] {
  fields.forEach((f, index) => {
    acc.push({ list: fields, index });
    if (f.children) slots(f.children, acc);
  });
  return acc;
}

/** Deep copy, so that a mutation never touches the seed message. */
function clone(fields: readonly Field[]): Field[] {
  return fields.map((f) => ({ ...f, ...(f.children ? { children: clone(f.children) } : {}) }));
}

/** Length prefixes a hostile client might declare for a payload of `n` bytes. */
function lies(n: number): number[][] {
  return [
    varint(0),
    varint(Math.max(0, n - 1)),
    varint(n + 1),
    varint(n + 1000),
    varint(2 ** 31 - 1),
    varint(2 ** 31),
    varint(2 ** 32),
    varint(2 ** 32 + n),
    varint(2 ** 53 + 1),
    varint(2n ** 63n),
    varint(2n ** 64n - 1n),
    [0x80 | (n & 0x7f), 0x80, 0x80, 0x80, 0x00], // overlong but terminated
    [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], // 11 bytes: overflows 64 bits
    [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80], // never terminates
  ];
}

const BAD_VARINTS: number[][] = [
  [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], // 2^64 - 1
  [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f], // more than 64 bits
  [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
  [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80],
  [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00], // overlong zero
  varint(2 ** 31),
  varint(2 ** 32 - 1),
  varint(2n ** 63n),
  varint(-1),
];

const FIELD_NUMBERS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 100, 2 ** 29 - 1];

export type Op =
  | { kind: 'flip'; at: number; bit: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'lie'; pick: number; which: number }
  | { kind: 'wiretype'; pick: number; wt: number }
  | { kind: 'fieldno'; pick: number; which: number }
  | { kind: 'badtag'; pick: number; which: number }
  | { kind: 'repeat'; pick: number; times: number }
  | { kind: 'drop'; pick: number }
  | { kind: 'swap'; pick: number; other: number }
  | { kind: 'badvarint'; pick: number; which: number }
  | { kind: 'nest'; pick: number; depth: number }
  | { kind: 'huge'; pick: number; depth: number };

/** Tags no encoder writes: field 0, field numbers past 2^29, 11-byte keys, unterminated keys. */
const BAD_TAGS: number[][] = [[0x00], [0x02], varint(2 ** 29 * 8 + 2), varint(2 ** 32 * 8), [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], [0x80, 0x80]];

export const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.nat(7) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 16 }) }),
  fc.record({ kind: fc.constant('lie' as const), pick: fc.nat(), which: fc.nat(13) }),
  fc.record({ kind: fc.constant('wiretype' as const), pick: fc.nat(), wt: fc.nat(7) }),
  fc.record({ kind: fc.constant('fieldno' as const), pick: fc.nat(), which: fc.nat(FIELD_NUMBERS.length - 1) }),
  fc.record({ kind: fc.constant('badtag' as const), pick: fc.nat(), which: fc.nat(BAD_TAGS.length - 1) }),
  fc.record({ kind: fc.constant('repeat' as const), pick: fc.nat(), times: fc.oneof(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 5, max: 300 })) }),
  fc.record({ kind: fc.constant('drop' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('swap' as const), pick: fc.nat(), other: fc.nat() }),
  fc.record({ kind: fc.constant('badvarint' as const), pick: fc.nat(), which: fc.nat(BAD_VARINTS.length - 1) }),
  fc.record({ kind: fc.constant('nest' as const), pick: fc.nat(), depth: fc.oneof(fc.integer({ min: 1, max: 80 }), fc.integer({ min: 80, max: 3000 })) }),
  fc.record({ kind: fc.constant('huge' as const), pick: fc.nat(), depth: fc.integer({ min: 1, max: 4 }) }),
);

/** Applies one mutation; structural ones fall back to a bit flip when the bytes no longer parse. */
export function mutate(b: Uint8Array, op: Op): Uint8Array {
  switch (op.kind) {
    case 'flip': {
      if (b.length === 0) return b;
      const out = Uint8Array.from(b);
      out[op.at % b.length]! ^= 1 << op.bit;
      return out;
    }
    case 'truncate':
      return b.subarray(0, op.at % (b.length + 1));
    case 'insert': {
      const at = op.at % (b.length + 1);
      const out = new Uint8Array(b.length + op.bytes.length);
      out.set(b.subarray(0, at));
      out.set(op.bytes, at);
      out.set(b.subarray(at), at + op.bytes.length);
      return out;
    }
    default:
      break;
  }
  const parsed = parseFields(b);
  if (!parsed || parsed.length === 0) return mutate(b, { kind: 'flip', at: op.pick, bit: op.pick % 8 });
  const tree = clone(parsed);
  const all = slots(tree);
  const { list, index } = all[op.pick % all.length]!;
  const f = list[index]!;
  switch (op.kind) {
    case 'lie': {
      const n = f.children ? serialize(f.children).length : f.raw.length;
      if (f.wt !== 2) {
        // A length prefix on a field that is not length-delimited: the value read as a length.
        f.wt = 2;
      }
      f.len = lies(n)[op.which % 14]!;
      break;
    }
    case 'wiretype':
      f.tag = varint(f.no * 8 + op.wt);
      break;
    case 'fieldno':
      f.tag = varint(FIELD_NUMBERS[op.which]! * 8 + f.wt);
      break;
    case 'badtag':
      f.tag = BAD_TAGS[op.which]!;
      break;
    case 'repeat': {
      const size = serialize([f]).length;
      const times = Math.min(op.times, Math.floor(MAX_MUTANT_BYTES / size));
      list.splice(index, 0, ...Array.from({ length: times }, () => f));
      break;
    }
    case 'drop':
      list.splice(index, 1);
      break;
    case 'swap': {
      const g = all[op.other % all.length]!;
      const other = clone([g.list[g.index]!])[0]!; // a copy: `other` may be an ancestor of f
      list[index] = { ...other, no: f.no, tag: varint(f.no * 8 + other.wt) };
      break;
    }
    case 'badvarint':
      if (f.wt === 0) f.raw = Uint8Array.from(BAD_VARINTS[op.which]!);
      else {
        // A varint where a length-delimited or fixed value belongs.
        f.tag = varint(f.no * 8);
        f.wt = 0;
        delete f.children;
        f.raw = Uint8Array.from(BAD_VARINTS[op.which]!);
      }
      break;
    case 'nest': {
      // The field wrapped in copies of itself: deep nesting of whatever message it is.
      // Written inside out as bytes (no tree), so that thousands of levels need no recursion.
      const core = serialize([f]);
      const prefixes: number[][] = [];
      let size = core.length;
      for (let d = 1; d < op.depth; d++) {
        const p = [...varint(f.no * 8 + 2), ...varint(size)];
        prefixes.push(p);
        size += p.length;
      }
      const payload = new Uint8Array(size);
      let at = 0;
      for (let d = prefixes.length - 1; d >= 0; d--) {
        payload.set(prefixes[d]!, at);
        at += prefixes[d]!.length;
      }
      payload.set(core, at);
      list[index] = { no: f.no, wt: 2, raw: payload };
      break;
    }
    case 'huge': {
      // The whole message copied into the field `depth` times: many records where few were.
      const copy = clone(tree);
      if (b.length * op.depth > MAX_MUTANT_BYTES) break;
      for (let d = 0; d < op.depth; d++) list.splice(index, 0, { no: f.no, wt: 2, raw: new Uint8Array(0), children: copy });
      break;
    }
  }
  return serialize(tree);
}

/** A valid message from `seeds`, mutated 0 to `maxOps` times. */
export function mutatedMessage(seeds: fc.Arbitrary<Uint8Array>, maxOps = 4): fc.Arbitrary<Uint8Array> {
  return fc.tuple(seeds, fc.array(opArb, { minLength: 0, maxLength: maxOps })).map(([seed, ops]) =>
    ops.reduce((b, op) => {
      const m = mutate(b, op);
      return m.length > MAX_MUTANT_BYTES ? b : m;
    }, seed),
  );
}

/** Hostile bytes: mostly mutated valid messages, some plain random bytes. */
export function hostileBytes(seeds: fc.Arbitrary<Uint8Array>): fc.Arbitrary<Uint8Array> {
  return fc.oneof({ arbitrary: mutatedMessage(seeds), weight: 8 }, { arbitrary: fc.uint8Array({ maxLength: 512 }), weight: 1 }, { arbitrary: seeds, weight: 1 });
}
