// Online log template miner (WASM build). The same algorithm as src/pipeline/logminer/reference.ts
// (and the files it names: tokenize, mask, json-shape, tokens, params, state),
// step for step, over raw memory: tokens are compared by two 32-bit hashes (64 bits) instead of by
// string, templates live in per-service hash maps and an LRU list. Output must equal the reference's
// for every input (test/pipeline/logminer/agree.test.ts); change both together.
//
// Memory contract (see src/pipeline/logminer/wasm-core.ts): the module owns its input and output
// buffers (module globals, so never collected), grows them by doubling in prepare(), and exposes
// their addresses; the host writes UTF-8 bodies + offsets into them, calls mine(), reads the outputs.

// ---- constants: core.ts's, checked equal by test/pipeline/logminer/constants.test.ts -----------------
const MATCH_BYTES: i32 = 4096;
const MAX_TOKENS: i32 = 128;
const LONG_TOKEN: i32 = 96;
const MAX_PARAMS: i32 = 16;
const JSON_MAX_BYTES: i32 = 16384;
const JSON_MAX_DEPTH: i32 = 4;
const JSON_MAX_KEYS: i32 = 64;
const PREFIX_TOKENS: i32 = 1;
const LEAF_MAX: i32 = 64;
const QUOTE_MAX: i32 = 512;
const ENUM_POSITIONS: i32 = 3;
let simNum: i64 = 7; // of SIM_DEN; set by init()
let enumMax: i32 = 5; // set by init()
const SIM_DEN: i64 = 10;
const FLAG_NEW: u8 = 1;
const FLAG_CHANGED: u8 = 2;
const FLAG_JSON: u8 = 4;
const FLAG_TRUNCATED: u8 = 8;

// ---- buffers -----------------------------------------------------------------------------------------
let inBuf = new StaticArray<u8>(1024);
let inOffs = new StaticArray<i32>(65);
let outCap: i32 = 0;
let oIds = new StaticArray<f64>(0);
let oFlags = new StaticArray<u8>(0);
let oPc = new StaticArray<u8>(0);
let oSlot = new StaticArray<u16>(0);
let oStart = new StaticArray<i32>(0);
let oLen = new StaticArray<i32>(0);
let oNum = new StaticArray<f64>(0);
let oChanged = new StaticArray<f64>(0);
let oSplit = new StaticArray<f64>(0);
let oEvicted = new StaticArray<f64>(0);
let oEvictedInto = new StaticArray<f64>(0);
let nChanged: i32 = 0;
let nEvicted: i32 = 0;
let patBuf = new StaticArray<u8>(1024);

export function prepare(totalBytes: i32, n: i32): void {
  if (inBuf.length < totalBytes) {
    let c = inBuf.length * 2;
    if (c < totalBytes) c = totalBytes;
    inBuf = new StaticArray<u8>(c);
  }
  if (inOffs.length < n + 1) {
    let c = inOffs.length * 2;
    if (c < n + 1) c = n + 1;
    inOffs = new StaticArray<i32>(c);
  }
  if (outCap < n) {
    let c = outCap * 2;
    if (c < n) c = n;
    if (c < 64) c = 64;
    outCap = c;
    oIds = new StaticArray<f64>(c);
    oFlags = new StaticArray<u8>(c);
    oPc = new StaticArray<u8>(c);
    oSlot = new StaticArray<u16>(c * MAX_PARAMS);
    oStart = new StaticArray<i32>(c * MAX_PARAMS);
    oLen = new StaticArray<i32>(c * MAX_PARAMS);
    oNum = new StaticArray<f64>(c * MAX_PARAMS);
    oChanged = new StaticArray<f64>(c);
    oSplit = new StaticArray<f64>(c);
    // retired per batch: at most n evictions and n + LEAF_MAX merges (merges.ts absorb)
    oEvicted = new StaticArray<f64>(2 * c + LEAF_MAX);
    oEvictedInto = new StaticArray<f64>(2 * c + LEAF_MAX);
  }
}
export function inputPtr(): usize { return changetype<usize>(inBuf); }
export function inputCap(): i32 { return inBuf.length; }
export function offsetsPtr(): usize { return changetype<usize>(inOffs); }
export function outCapacity(): i32 { return outCap; }
export function idsPtr(): usize { return changetype<usize>(oIds); }
export function flagsPtr(): usize { return changetype<usize>(oFlags); }
export function pcountPtr(): usize { return changetype<usize>(oPc); }
export function pslotPtr(): usize { return changetype<usize>(oSlot); }
export function pstartPtr(): usize { return changetype<usize>(oStart); }
export function plenPtr(): usize { return changetype<usize>(oLen); }
export function pnumPtr(): usize { return changetype<usize>(oNum); }
export function splitPtr(): usize { return changetype<usize>(oSplit); }
export function changedPtr(): usize { return changetype<usize>(oChanged); }
export function evictedPtr(): usize { return changetype<usize>(oEvicted); }
export function evictedIntoPtr(): usize { return changetype<usize>(oEvictedInto); }
export function changedCount(): i32 { return nChanged; }
export function evictedCount(): i32 { return nEvicted; }
export function patPtr(): usize { return changetype<usize>(patBuf); }

// ---- character classes -------------------------------------------------------------------------------
@inline function ch(p: usize, i: i32): i32 { return <i32>load<u8>(p + <usize>i); }
// One lookup per byte: a 256-entry class table built once at start (measured: the switch-based
// isDelim alone took 14% of mining time).
const C_SEP: u16 = 1, C_DIGIT: u16 = 2, C_ALPHA: u16 = 4, C_HEX: u16 = 8, C_DELIM: u16 = 16, C_SUBSEP: u16 = 32,
  C_OPEN: u16 = 64, C_CLOSE: u16 = 128, C_GEN: u16 = 256, C_SCHEME: u16 = 512, C_EMAIL: u16 = 1024, C_WS: u16 = 2048,
  C_SCALAR: u16 = 4096, C_MASKABLE: u16 = 8192, C_QUOTE: u16 = 16384;
const CLASS = new StaticArray<u16>(256);
function initClasses(): void {
  for (let c = 0; c < 256; c++) {
    let f: u16 = 0;
    const digit = c >= 48 && c <= 57;
    const alpha = (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
    if (c <= 0x20 || c == 0x7f) f |= C_SEP;
    if (digit) f |= C_DIGIT;
    if (alpha) f |= C_ALPHA;
    if (digit || (c >= 65 && c <= 70) || (c >= 97 && c <= 102)) f |= C_HEX;
    let delim = false;
    switch (c) {
      case 61: case 58: case 44: case 59: case 64: case 47: case 40: case 41: case 91: case 93:
      case 123: case 125: case 60: case 62: case 34: case 39: case 124: case 92: case 35:
      case 33: case 63: case 38:
        delim = true;
    }
    if (delim) f |= C_DELIM;
    if (delim && c != 60 && c != 62) f |= C_GEN;
    if (c == 46 || c == 45 || c == 95 || c == 43) f |= C_SUBSEP;
    if (c == 40 || c == 91 || c == 123 || c == 60 || c == 34 || c == 39) f |= C_OPEN;
    if (c == 41 || c == 93 || c == 125 || c == 62 || c == 34 || c == 39 || c == 44 || c == 59 || c == 58 ||
      c == 46 || c == 33 || c == 63) f |= C_CLOSE;
    if (alpha || digit || c == 43 || c == 45 || c == 46) f |= C_SCHEME | C_SCALAR;
    if (alpha || digit || c == 46 || c == 95 || c == 37 || c == 43 || c == 45) f |= C_EMAIL;
    if (c == 32 || c == 9 || c == 10 || c == 13) f |= C_WS;
    if (c == 34) f |= C_QUOTE;
    // a token holding none of these bytes cannot be masked (no digit, no path, no e-mail)
    if (digit || c == 47 || c == 64) f |= C_MASKABLE;
    CLASS[c] = f;
  }
}
initClasses();
@inline function cls(c: i32): u16 { return unchecked(CLASS[c]); }
@inline function isSep(c: i32): bool { return (cls(c) & C_SEP) != 0; }
@inline function isDigit(c: i32): bool { return <u32>(c - 48) <= 9; }
@inline function isAlpha(c: i32): bool { return (cls(c) & C_ALPHA) != 0; }
@inline function isHex(c: i32): bool { return (cls(c) & C_HEX) != 0; }
@inline function isDelim(c: i32): bool { return (cls(c) & C_DELIM) != 0; }
@inline function isGenDelim(c: i32): bool { return (cls(c) & C_GEN) != 0; }
@inline function isSubSep(c: i32): bool { return (cls(c) & C_SUBSEP) != 0; }
@inline function isOpen(c: i32): bool { return (cls(c) & C_OPEN) != 0; }
@inline function isClose(c: i32): bool { return (cls(c) & C_CLOSE) != 0; }
@inline function isSchemeChar(c: i32): bool { return (cls(c) & C_SCHEME) != 0; }
@inline function isEmailLocal(c: i32): bool { return (cls(c) & C_EMAIL) != 0; }
@inline function isPathLead(c: i32): bool { return c == 61 || c == 40 || c == 58; }
@inline function isPathEnd(c: i32): bool {
  return c == 44 || c == 59 || c == 41 || c == 93 || c == 125 || c == 34 || c == 39 || c == 38 || c == 124;
}
@inline function isWs(c: i32): bool { return (cls(c) & C_WS) != 0; }
@inline function isScalarChar(c: i32): bool { return (cls(c) & C_SCALAR) != 0; }

// ---- hashing -----------------------------------------------------------------------------------------
function hashBytes(p: usize, len: i32): u64 {
  let h1: u32 = 2166136261;
  let h2: u32 = 5381;
  for (let i = 0; i < len; i++) {
    const c = <u32>load<u8>(p + <usize>i);
    h1 = (h1 ^ c) * 16777619;
    h2 = ((h2 << 5) + h2) ^ c;
  }
  h2 ^= h2 >>> 15;
  h2 *= 0x2c1b3c6d;
  h2 ^= h2 >>> 12;
  return (<u64>h1 << 32) | <u64>h2;
}
const WILD_KEY: u64 = 0xa5a5a5a55a5a5a5a;


// ---- names: top-level domains and months, as packed lower-case bytes (mask.ts TLDS, MONTHS) ----------
const TLD_SET = new Set<u64>();
// A 1,024-bit Bloom filter in front of TLD_SET: most dotted labels (org.apache.hadoop) are no TLD,
// and a Set lookup for each of them made the fast path of dotted tokens slow.
const TLD_BLOOM = new StaticArray<u32>(32);
@inline function bloomBit(v: u64): i32 { return <i32>((v * 0x9e3779b97f4a7c15) >>> 54); }
const MONTH_SET = new Set<u64>();
/** dates.ts: weekday and month names and their three-letter abbreviations, by hashLower */
const DATE_NAMES = new Set<u64>();
/** A 64-bit filter of the names' first three letters (lower-cased): most words next to a number are no name and stop here. */
let DATE_PREFIX: u64 = 0;
/** FNV-1a over lower-cased ASCII letters: the names of DATE_NAMES, from a string or from bytes. */
function hashLowerStr(x: string): u64 {
  let h: u64 = 0xcbf29ce484222325;
  for (let i = 0; i < x.length; i++) h = (h ^ <u64>(x.charCodeAt(i) | 32)) * 0x100000001b3;
  return h;
}
function prefixBitStr(x: string): u64 {
  const v = (<u32>(x.charCodeAt(0) | 32) << 16) | (<u32>(x.charCodeAt(1) | 32) << 8) | <u32>(x.charCodeAt(2) | 32);
  return <u64>1 << <u64>((v * 0x9e3779b1) >>> 26);
}
function hashLower(p: usize, n: i32): u64 {
  let h: u64 = 0xcbf29ce484222325;
  for (let i = 0; i < n; i++) h = (h ^ <u64>(ch(p, i) | 32)) * 0x100000001b3;
  return h;
}
/** Packs [s, e) (at most 8 bytes) into a u64, the first byte lowest; 0 when longer. */
function pack(p: usize, s: i32, e: i32): u64 {
  if (e - s > 8 || e <= s) return 0;
  let v: u64 = 0;
  for (let i = e - 1; i >= s; i--) v = (v << 8) | <u64>ch(p, i);
  return v;
}
function packStr(x: string): u64 {
  let v: u64 = 0;
  for (let i = x.length - 1; i >= 0; i--) v = (v << 8) | <u64>x.charCodeAt(i);
  return v;
}
function initNames(): void {
  // mask.ts TLDS and MONTHS (test/pipeline/logminer/constants.test.ts checks the lists are equal)
  const tlds = [
    'com', 'net', 'org', 'edu', 'gov', 'mil', 'int', 'io', 'co', 'info', 'biz', 'us', 'uk', 'de', 'fr', 'jp',
    'cn', 'hk', 'ru', 'nl', 'eu', 'au', 'ca', 'br', 'local', 'internal', 'lan', 'cloud', 'dev', 'app', 'ai',
  ];
  for (let i = 0; i < tlds.length; i++) {
    const v = packStr(tlds[i]);
    TLD_SET.add(v);
    const b = bloomBit(v);
    TLD_BLOOM[b >>> 5] |= 1 << (b & 31);
  }
  // dates.ts WEEKDAY_NAMES and MONTH_NAMES; a name is one of them or its first three letters
  const weekdayNames = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
  const monthNames = [
    'january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december',
  ];
  for (let i = 0; i < 7; i++) DATE_PREFIX |= prefixBitStr(weekdayNames[i]);
  for (let i = 0; i < 12; i++) DATE_PREFIX |= prefixBitStr(monthNames[i]);
  for (let i = 0; i < monthNames.length; i++) {
    MONTH_SET.add(packStr(monthNames[i].substring(0, 3)));
    DATE_NAMES.add(hashLowerStr(monthNames[i]));
    DATE_NAMES.add(hashLowerStr(monthNames[i].substring(0, 3)));
  }
  for (let i = 0; i < weekdayNames.length; i++) {
    DATE_NAMES.add(hashLowerStr(weekdayNames[i]));
    DATE_NAMES.add(hashLowerStr(weekdayNames[i].substring(0, 3)));
  }
}
initNames();
function isTld(p: usize, s: i32, e: i32): bool {
  const v = pack(p, s, e);
  const b = bloomBit(v);
  if ((unchecked(TLD_BLOOM[b >>> 5]) & (1 << (b & 31))) == 0) return false;
  return TLD_SET.has(v);
}
function isMonth(p: usize, k: i32, e: i32): bool {
  if (k + 3 > e || (k + 3 < e && isAlpha(ch(p, k + 3)))) return false;
  let v: u64 = 0;
  for (let i = k + 2; i >= k; i--) {
    const c = ch(p, i);
    if (!isAlpha(c)) return false;
    v = (v << 8) | <u64>(c | 32);
  }
  return MONTH_SET.has(v);
}

// ---- tokens: a quoted string with separators is one token -----------------------------------------
let tokQs: i32 = -1;
let tokQe: i32 = -1;
function quoteEnd(p: usize, q: i32, end: i32): i32 {
  const lim = q + QUOTE_MAX < end ? q + QUOTE_MAX : end;
  let sep = false;
  for (let j = q + 1; j < lim; j++) {
    const c = ch(p, j);
    if (c == 10 || c == 13) return -1;
    if (isSep(c)) sep = true;
    else if (c == 34 && ch(p, j - 1) != 92) {
      const n = j + 1 < end ? ch(p, j + 1) : 32;
      if (isSep(n) || n == 44 || n == 59 || n == 41 || n == 93 || n == 125) return sep ? j : -1;
    }
  }
  return -1;
}
@inline function isUpper(c: i32): bool { return <u32>(c - 65) <= 25; }
/** tokenize.ts isRequestLine: `METHOD target [PROTO/version]` inside quotes splits into its words. */
function isRequestLine(p: usize, s: i32, e: i32): bool {
  let i = s;
  if (isStar(p, i, e)) i += 3;
  else {
    while (i < e && isUpper(ch(p, i))) i++;
    if (i - s < 3 || i - s > 10) return false;
  }
  if (i >= e || ch(p, i) != 32) return false;
  i++;
  const ts = i;
  while (i < e && ch(p, i) != 32) i++;
  if (i == ts) return false;
  const c0 = ch(p, ts);
  let url = false;
  if (isAlpha(c0)) {
    for (let k = ts; k + 3 <= i; k++) {
      if (ch(p, k) == 58 && ch(p, k + 1) == 47 && ch(p, k + 2) == 47) { url = true; break; }
    }
  }
  if (!(c0 == 47 || c0 == 42 || isStar(p, ts, i) || url)) return false;
  for (let k = ts; k < i; k++) if (isSep(ch(p, k))) return false;
  if (i == e) return true;
  i++;
  const ps = i;
  if (isStar(p, i, e)) i += 3;
  else while (i < e && isUpper(ch(p, i))) i++;
  if (i == ps || i >= e || ch(p, i) != 47 || i + 1 >= e) return false;
  for (let k = i + 1; k < e; k++) if (isSep(ch(p, k))) return false;
  return true;
}
@inline function tokenEnd(p: usize, s: i32, end: i32): i32 {
  let i = s;
  tokQs = -1;
  tokQe = -1;
  while (true) {
    // one class lookup a byte: stop at a separator or a quote (measured: a compare for the quote on
    // every byte cost the engine 8%)
    while (i < end && (cls(ch(p, i)) & (C_SEP | C_QUOTE)) == 0) i++;
    if (i >= end || isSep(ch(p, i))) break;
    if (tokQs < 0 && (i == s || ch(p, i - 1) == 61 || ch(p, i - 1) == 58)) {
      const j = quoteEnd(p, i, end);
      if (j > 0 && !(i == s && isRequestLine(p, i + 1, j))) {
        tokQs = i - s;
        tokQe = j - s;
        i = j + 1;
        continue;
      }
    }
    i++;
  }
  return i;
}

function wholeRunEnd(p: usize, s: i32, e: i32): i32 {
  let k = s;
  let colons = 0;
  let dbl = false;
  let digit = false;
  let group = 0;
  let maxGroup = 0;
  let two = true;
  while (k < e) {
    const c = ch(p, k);
    if (c == 58) {
      if (k > s && ch(p, k - 1) == 58) dbl = true;
      if (group != 2) two = false;
      colons++;
      group = 0;
    } else if (isHex(c)) {
      if (isDigit(c)) digit = true;
      group++;
      if (group > maxGroup) maxGroup = group;
    } else break;
    k++;
  }
  if (group != 2) two = false;
  const endsClean = k == e || !(isAlpha(ch(p, k)) || isDigit(ch(p, k)) || ch(p, k) == 46);
  if (digit && maxGroup <= 4 && endsClean && ((colons >= 2 && (dbl || colons == 7)) || (colons == 5 && two))) return k;
  if (!isDigit(ch(p, s))) return -1;
  let month = false;
  let seps = 0;
  k = s;
  while (k < e) {
    const c = ch(p, k);
    if (isDigit(c)) k++;
    else if (c == 45 || c == 47 || c == 58 || c == 46 || c == 43) {
      seps++;
      k++;
    } else if (!month && isMonth(p, k, e)) {
      month = true;
      k += 3;
    } else break;
  }
  return month && seps >= 2 && (k == e || !isAlpha(ch(p, k))) ? k : -1;
}

function isDomain(p: usize, s: i32, e: i32): bool {
  // the top-level label first: most segments end in a digit and are rejected here (5% of mining)
  let top = e - 1;
  while (top > s && isAlpha(ch(p, top))) top--;
  if (top == e - 1 || top <= s || ch(p, top) != 46 || !isTld(p, top + 1, e)) return false;
  let dot = s - 1; // the previous dot: labels are never empty
  for (let i = s; i <= top; i++) {
    const c = ch(p, i);
    if (c == 46) {
      if (i == dot + 1) return false;
      dot = i;
    } else if (!isAlpha(c) && !isDigit(c) && c != 45) return false;
  }
  return true;
}

// ---- masking (writes the masked token to mbuf at mpos) ----------------------------------------------
const mbuf = new StaticArray<u8>(3 * MATCH_BYTES + 64);
let mpos: i32 = 0;
let gVarS: i32 = -1;
let gVarE: i32 = -1;
let gFast = false;
let gHash: u64 = 0;
let gKind: u8 = 0;

@inline function mput(c: i32): void { unchecked(mbuf[mpos++] = <u8>c); }
function mcopy(p: usize, s: i32, e: i32): void {
  const n = e - s;
  if (n <= 0) return;
  memory.copy(changetype<usize>(mbuf) + <usize>mpos, p + <usize>s, <usize>n);
  mpos += n;
}
@inline function mwild(): void { mput(60); mput(42); mput(62); }

function isNumberedName(p: usize, s: i32, e: i32): bool {
  let d = e;
  while (d > s && isDigit(ch(p, d - 1))) d--;
  if (e - d < 2 || d - s < 2) return false;
  for (let i = s; i < d; i++) if (!isAlpha(ch(p, i))) return false;
  return true;
}

function isVarPart(p: usize, s: i32, e: i32): bool {
  if (e <= s) return false;
  if (isDigit(ch(p, s))) return true;
  if (isNumberedName(p, s, e)) return true;
  if (e - s < 6) return false;
  let digit = false;
  for (let i = s; i < e; i++) {
    const c = ch(p, i);
    if (!isHex(c)) return false;
    if (isDigit(c)) digit = true;
  }
  return digit;
}

function maskSegment(p: usize, s: i32, e: i32): i32 {
  let variable = false;
  let keep = 0;
  let part = 0;
  let q0 = s;
  while (q0 <= e) {
    let q = q0;
    while (q < e && !isSubSep(ch(p, q))) q++;
    if (isVarPart(p, q0, q)) variable = true;
    if (part < 2) {
      let alpha = q > q0;
      for (let i = q0; i < q && alpha; i++) if (!isAlpha(ch(p, i))) alpha = false;
      const sep = q < e ? ch(p, q) : 0;
      if (part == 0) keep = alpha && (sep == 46 || sep == 45) ? q + 1 - s : 0;
      else if (alpha && keep > 0) keep = 0;
      part = keep > 0 ? part + 1 : 2;
    }
    q0 = q + 1;
  }
  return variable ? keep : -1;
}

function isHostPort(p: usize, s: i32, e: i32, tail: i32): bool {
  if (e + 1 >= tail || ch(p, e) != 58 || !isDigit(ch(p, e + 1))) return false;
  let j = e + 1;
  while (j < tail && isDigit(ch(p, j))) j++;
  if (j < tail && !isDelim(ch(p, j))) return false;
  let dot = false;
  for (let i = s; i < e; i++) {
    const c = ch(p, i);
    if (c == 46) {
      if (i == s || i == e - 1) return false;
      dot = true;
    } else if (!isAlpha(c) && !isDigit(c) && c != 45) return false;
  }
  return dot;
}

/** Does any word of the quoted text p[s, e) hold a variable part? (masks into mbuf and takes it back) */
function quotedVariable(p: usize, s: i32, e: i32): bool {
  const m0 = mpos;
  let i = s;
  let v = false;
  while (i < e && !v) {
    while (i < e && isSep(ch(p, i))) i++;
    let j = i;
    while (j < e && !isSep(ch(p, j))) j++;
    if (j > i) {
      maskToken(p + <usize>i, j - i, -1, -1);
      v = gVarS >= 0;
      mpos = m0;
    }
    i = j;
  }
  return v;
}

// One function: every variable rule is tried in one pass over the token's bytes, in a fixed order the twin mirrors.
/** Masks token p[0, L) into mbuf; sets gVarS/gVarE (relative to the token). [qs, qe]: its quoted string with separators. */
function maskToken(p: usize, L: i32, qs: i32, qe: i32): void {
  if (qs >= 0) {
    const variable = qe - qs - 1 > LONG_TOKEN || quotedVariable(p, qs + 1, qe);
    gVarS = -1;
    gVarE = -1;
    gFast = false;
    if (variable) {
      mcopy(p, 0, qs + 1); mwild(); mcopy(p, qe, L);
      gVarS = qs + 1; gVarE = qe;
    } else mcopy(p, 0, L);
    return;
  }
  gVarS = -1;
  gVarE = -1;
  gFast = false;
  if (L > LONG_TOKEN) {
    mwild();
    gVarS = 0;
    gVarE = L;
    return;
  }
  // fast path: nothing to mask without a digit, '/' or '@' (every rule below needs one); the
  // token's hash and kind come out of the same pass (gFast)
  let h1: u32 = 2166136261;
  let h2: u32 = 5381;
  let lt = false;
  let k = 0;
  for (; k < L; k++) {
    const c = ch(p, k);
    const f = cls(c);
    if ((f & C_MASKABLE) != 0) break;
    if (c == 60) lt = true;
    // a dot before a top-level domain may end a domain name (isDomain): take the slow path
    if (c == 46) {
      let j = k + 1;
      while (j < L && isAlpha(ch(p, j))) j++;
      if (j > k + 1 && (j == L || !(isDigit(ch(p, j)) || ch(p, j) == 45)) && isTld(p, k + 1, j)) break;
    }
    h1 = (h1 ^ <u32>c) * 16777619;
    h2 = ((h2 << 5) + h2) ^ <u32>c;
  }
  if (k == L) {
    mcopy(p, 0, L);
    h2 ^= h2 >>> 15;
    h2 *= 0x2c1b3c6d;
    h2 ^= h2 >>> 12;
    gFast = true;
    gHash = (<u64>h1 << 32) | <u64>h2;
    gKind = lt ? kindOf(p, L) : 0;
    return;
  }
  let a = 0;
  while (a < L && isOpen(ch(p, a))) a++;
  let b = L;
  while (b > a && isClose(ch(p, b - 1))) b--;
  if (a < b) {
    // URL
    let u = -1;
    for (let k = a; k + 3 <= L; k++) {
      if (ch(p, k) == 58 && ch(p, k + 1) == 47 && ch(p, k + 2) == 47) { u = k; break; }
    }
    if (u > a && u + 3 <= b) {
      let s = u;
      while (s > a && isSchemeChar(ch(p, s - 1))) s--;
      if (s < u && isAlpha(ch(p, s))) {
        let digit = false;
        for (let i = u + 3; i < b; i++) if (isDigit(ch(p, i))) { digit = true; break; }
        if (!digit) { mcopy(p, 0, L); return; }
        mcopy(p, 0, u + 3); mwild(); mcopy(p, b, L);
        gVarS = u + 3; gVarE = b;
        return;
      }
    }
    // path
    const c0 = ch(p, a);
    if (
      (c0 == 47 && b - a >= 2) ||
      (isAlpha(c0) && b - a >= 4 && ch(p, a + 1) == 58 && ch(p, a + 2) == 92) ||
      (c0 == 126 && b - a >= 3 && ch(p, a + 1) == 47) ||
      (c0 == 46 && b - a >= 3 && ch(p, a + 1) == 47) ||
      (c0 == 46 && b - a >= 4 && ch(p, a + 1) == 46 && ch(p, a + 2) == 47)
    ) {
      mcopy(p, 0, a); mwild(); mcopy(p, b, L);
      gVarS = a; gVarE = b;
      return;
    }
    // e-mail
    let at = -1;
    for (let k = a; k < L; k++) if (ch(p, k) == 64) { at = k; break; }
    if (at > a && at < b) {
      let ok = true;
      for (let i = a; i < at && ok; i++) if (!isEmailLocal(ch(p, i))) ok = false;
      let dots = 0;
      let lastDot = -1;
      for (let i = at + 1; i < b && ok; i++) {
        const c = ch(p, i);
        if (c == 46) {
          if (i == lastDot + 1 || i == at + 1) ok = false;
          dots++;
          lastDot = i;
        } else if (!isAlpha(c) && !isDigit(c) && c != 45) ok = false;
      }
      if (ok && dots > 0 && b - lastDot - 1 >= 2) {
        for (let i = lastDot + 1; i < b && ok; i++) if (!isAlpha(ch(p, i))) ok = false;
        if (ok) {
          mcopy(p, 0, a); mwild(); mcopy(p, b, L);
          gVarS = a; gVarE = b;
          return;
        }
      }
    }
  }
  // segments; trailing dots stay outside the last segment
  let tail = L;
  while (tail > 0 && ch(p, tail - 1) == 46) tail--;
  let i = 0;
  const w = a < b ? wholeRunEnd(p, a, b) : -1;
  if (w > 0) {
    mcopy(p, 0, a); mwild();
    gVarS = a; gVarE = w;
    i = w;
  }
  while (i < tail) {
    const c = ch(p, i);
    if (isDelim(c)) {
      if (c == 47 && i > 0 && isPathLead(ch(p, i - 1)) && i + 1 < L && !isDelim(ch(p, i + 1))) {
        let j = i + 1;
        while (j < tail && !isPathEnd(ch(p, j))) j++;
        mwild();
        if (gVarS < 0) gVarS = i;
        gVarE = j;
        i = j;
        continue;
      }
      mput(c);
      i++;
      continue;
    }
    let e = i;
    while (e < tail && !isDelim(ch(p, e))) e++;
    const keep = isHostPort(p, i, e, tail) || isDomain(p, i, e) ? 0 : maskSegment(p, i, e);
    if (keep < 0) mcopy(p, i, e);
    else {
      mcopy(p, i, i + keep);
      mwild();
      if (gVarS < 0) gVarS = i + keep;
      gVarE = e;
    }
    i = e;
  }
  mcopy(p, tail, L);
}

/** 0: constant, 1: exactly <*>, 2: contains <*> */
function kindOf(p: usize, len: i32): u8 {
  if (len == 3 && ch(p, 0) == 60 && ch(p, 1) == 42 && ch(p, 2) == 62) return 1;
  for (let i = 0; i + 3 <= len; i++) {
    if (ch(p, i) == 60 && ch(p, i + 1) == 42 && ch(p, i + 2) == 62) return 2;
  }
  return 0;
}
@inline function isStar(p: usize, i: i32, len: i32): bool {
  return i + 3 <= len && ch(p, i) == 60 && ch(p, i + 1) == 42 && ch(p, i + 2) == 62;
}

function globMatch(g: usize, gl: i32, s: usize, sl: i32): bool {
  let gi = 0;
  let si = 0;
  let starG = -1;
  let starS = 0;
  while (si < sl) {
    if (isStar(g, gi, gl)) {
      starG = gi;
      gi += 3;
      starS = si;
    } else if (gi < gl && ch(g, gi) == ch(s, si)) {
      gi++;
      si++;
    } else if (starG >= 0) {
      gi = starG + 3;
      starS++;
      si = starS;
    } else return false;
  }
  while (isStar(g, gi, gl)) gi += 3;
  return gi == gl;
}

function parseNumber(p: usize, s: i32, e: i32): f64 {
  let i = s;
  let neg = false;
  if (i < e && (ch(p, i) == 45 || ch(p, i) == 43)) {
    neg = ch(p, i) == 45;
    i++;
  }
  let v: f64 = 0;
  let digits = 0;
  while (i < e && isDigit(ch(p, i)) && digits < 18) {
    v = v * 10 + <f64>(ch(p, i) - 48);
    i++;
    digits++;
  }
  if (digits == 0 || (i < e && isDigit(ch(p, i)))) return NaN;
  if (i < e && ch(p, i) == 46) {
    i++;
    let f: f64 = 0;
    let scale: f64 = 1;
    let fd = 0;
    while (i < e && isDigit(ch(p, i))) {
      if (fd < 15) {
        f = f * 10 + <f64>(ch(p, i) - 48);
        scale *= 10;
        fd++;
      }
      i++;
    }
    v += f / scale;
  }
  const unit = e - i;
  if (unit == 1 && ch(p, i) == 37) return neg ? -v : v;
  if (unit > 3) return NaN;
  for (let k = i; k < e; k++) if (!isAlpha(ch(p, k))) return NaN;
  return neg ? -v : v;
}

// ---- JSON shape (into sbuf) --------------------------------------------------------------------------
const sbuf = new StaticArray<u8>(4 * JSON_MAX_BYTES + 64);
let spos: i32 = 0;
let jp: usize = 0;
let jn: i32 = 0;
let ji: i32 = 0;
let jpc: i32 = 0;
const jStarts = new StaticArray<i32>(MAX_PARAMS);
const jEnds = new StaticArray<i32>(MAX_PARAMS);

@inline function sput(c: i32): void { unchecked(sbuf[spos++] = <u8>c); }
@inline function swild(): void { sput(60); sput(42); sput(62); }
function jparam(s: i32, e: i32): void {
  if (jpc < MAX_PARAMS) {
    unchecked(jStarts[jpc] = s);
    unchecked(jEnds[jpc] = e);
    jpc++;
  }
}
function jws(): void { while (ji < jn && isWs(ch(jp, ji))) ji++; }
function jskipString(): bool {
  ji++;
  while (ji < jn) {
    const c = ch(jp, ji);
    if (c == 92) ji += 2;
    else if (c == 34) { ji++; return true; }
    else ji++;
  }
  return false;
}
function jskipNested(): bool {
  let depth = 0;
  while (ji < jn) {
    const c = ch(jp, ji);
    if (c == 34) {
      if (!jskipString()) return false;
      continue;
    }
    if (c == 123 || c == 91) depth++;
    else if (c == 125 || c == 93) {
      depth--;
      if (depth == 0) { ji++; return true; }
    }
    ji++;
  }
  return false;
}
function jvalue(depth: i32): bool {
  jws();
  if (ji >= jn) return false;
  const c = ch(jp, ji);
  if (c == 123) {
    if (depth >= JSON_MAX_DEPTH) {
      const s = ji;
      if (!jskipNested()) return false;
      jparam(s, ji);
      swild();
      return true;
    }
    return jobject(depth + 1);
  }
  if (c == 91) {
    const s = ji;
    if (!jskipNested()) return false;
    jparam(s, ji);
    sput(91); swild(); sput(93);
    return true;
  }
  if (c == 34) {
    const s = ji + 1;
    if (!jskipString()) return false;
    jparam(s, ji - 1);
    swild();
    return true;
  }
  if (c == 60 && ji + 2 < jn && ch(jp, ji + 1) == 42 && ch(jp, ji + 2) == 62) {
    ji += 3;
    swild();
    return true;
  }
  const s = ji;
  while (ji < jn && isScalarChar(ch(jp, ji))) ji++;
  if (ji == s) return false;
  jparam(s, ji);
  swild();
  return true;
}
function jobject(depth: i32): bool {
  ji++;
  sput(123);
  jws();
  if (ji < jn && ch(jp, ji) == 125) { ji++; sput(125); return true; }
  for (let keys = 0; ; keys++) {
    if (keys >= JSON_MAX_KEYS) return false;
    jws();
    if (ji >= jn || ch(jp, ji) != 34) return false;
    const ks = ji;
    if (!jskipString()) return false;
    let ke = ji;
    if (ke > jn) ke = jn;
    for (let k = ks; k < ke; k++) sput(ch(jp, k));
    jws();
    if (ji >= jn || ch(jp, ji) != 58) return false;
    ji++;
    sput(58);
    if (!jvalue(depth)) return false;
    jws();
    if (ji >= jn) return false;
    const c = ch(jp, ji);
    ji++;
    if (c == 44) { sput(44); continue; }
    if (c == 125) { sput(125); return true; }
    return false;
  }
}
/** Shape of the JSON object p[0, n) into sbuf[0, spos); false when it is not one. */
function jsonShape(p: usize, n: i32): bool {
  if (n > JSON_MAX_BYTES) return false;
  jp = p; jn = n; ji = 0; spos = 0; jpc = 0;
  jws();
  if (ji >= jn || ch(jp, ji) != 123) return false;
  if (!jobject(1)) return false;
  jws();
  return ji == jn;
}

// ---- templates and services --------------------------------------------------------------------------
class Tpl {
  id: f64 = 0;
  svc: i32 = 0;
  json: bool = false;
  key: u64 = 0;
  ntok: i32 = 0;
  pat: StaticArray<u8> = new StaticArray<u8>(0);
  ts: StaticArray<i32> = new StaticArray<i32>(0);
  tl: StaticArray<i32> = new StaticArray<i32>(0);
  th: StaticArray<u64> = new StaticArray<u64>(0);
  kind: StaticArray<u8> = new StaticArray<u8>(0);
  /** 1 at positions holding the value of a `key: value` pair (tokens.ts valuePositions) */
  kv: StaticArray<u8> = new StaticArray<u8>(0);
  /** per token, the index of the '=' of a key=value token with a non-empty key and value, else 0 */
  eqAt: StaticArray<i32> = new StaticArray<i32>(0);
  /** tokens.ts skeletonOf, hashed; 0 when not indexed (JSON, no constant or no variable) */
  skel: u64 = 0;
  used: u64 = 0;
  prev: Tpl | null = null;
  next: Tpl | null = null;
}

class Svc {
  leaves: Map<u64, Array<Tpl>> = new Map<u64, Array<Tpl>>();
  shapes: Map<u64, Tpl> = new Map<u64, Tpl>();
  skels: Map<u64, Tpl> = new Map<u64, Tpl>();
  /** state.ts heads: leading-token key (headOf) → text templates of any length, the LEAF_MAX latest added */
  heads: Map<u64, Array<Tpl>> = new Map<u64, Array<Tpl>>();
  /** state.ts fields: field name hash (fieldHash) → tokens of live templates that write it as key=value */
  fields: Map<u64, i32> = new Map<u64, i32>();
  head: Tpl | null = null; // least recently used
  tail: Tpl | null = null; // most recently used
  count: i32 = 0;
}

let cap: i32 = 2000;
let nextIdV: f64 = 1;
let tick: u64 = 0;
const services = new Array<Svc | null>();
const byId = new Map<u64, Tpl>();
const pending = new Map<u64, Tpl>();

export function init(maxTemplatesPerService: i32, similarityTenths: i32, enumMaxWords: i32): void {
  cap = maxTemplatesPerService < 1 ? 1 : maxTemplatesPerService;
  simNum = <i64>similarityTenths;
  enumMax = enumMaxWords;
}
export function nextId(): f64 { return nextIdV; }
export function setNextId(id: f64): void { if (id > nextIdV) nextIdV = id; }

function service(svc: i32): Svc {
  while (services.length <= svc) services.push(null);
  let s = unchecked(services[svc]);
  if (s === null) {
    s = new Svc();
    services[svc] = s;
  }
  return s;
}
export function liveCount(svc: i32): i32 {
  if (svc >= services.length) return 0;
  const s = unchecked(services[svc]);
  return s === null ? 0 : s.count;
}

function unlink(s: Svc, t: Tpl): void {
  const p = t.prev;
  const n = t.next;
  if (p !== null) p.next = n; else s.head = n;
  if (n !== null) n.prev = p; else s.tail = p;
  t.prev = null;
  t.next = null;
}
function linkTail(s: Svc, t: Tpl): void {
  t.prev = s.tail;
  t.next = null;
  const tl = s.tail;
  if (tl !== null) tl.next = t; else s.head = t;
  s.tail = t;
}
function touch(s: Svc, t: Tpl): void {
  t.used = ++tick;
  if (s.tail === t) return;
  unlink(s, t);
  linkTail(s, t);
}

/** A field name's hash, never 0 (0: no field). */
@inline function nameHash(p: usize, n: i32): u64 {
  const h = hashBytes(p, n);
  return h == 0 ? 1 : h;
}
/** tokens.ts fieldKey over p[0, n): the hash of the field a key=value token writes, or 0. */
function fieldHash(p: usize, n: i32): u64 {
  let k = -1;
  for (let i = 0; i < n; i++) {
    if (ch(p, i) == 61) {
      k = i;
      break;
    }
  }
  if (k <= 0) return 0;
  let a = 0;
  while (a < k && !isAlpha(ch(p, a))) a++;
  if (a == k) return 0;
  for (let i = a; i < k; i++) {
    const c = ch(p, i);
    if (!isAlpha(c) && !isDigit(c) && c != 95 && c != 45 && c != 46) return 0;
  }
  return nameHash(p + <usize>a, k - a);
}
/** state.ts countFields: counts (delta 1) or uncounts (-1) the fields text template t writes. */
function countFields(s: Svc, t: Tpl, delta: i32): void {
  const pp = changetype<usize>(t.pat);
  for (let i = 0; i < t.ntok; i++) {
    const h = fieldHash(pp + <usize>unchecked(t.ts[i]), unchecked(t.tl[i]));
    if (h == 0) continue;
    const n = (s.fields.has(h) ? s.fields.get(h) : 0) + delta;
    if (n > 0) s.fields.set(h, n);
    else s.fields.delete(h);
  }
}
/** tokens.ts fieldBefore: is template t's token i - 1 a constant naming a field the service writes as key=value? */
function afterField(s: Svc, t: Tpl, i: i32): bool {
  if (i == 0 || unchecked(t.kind[i - 1]) != 0) return false;
  const p = changetype<usize>(t.pat) + <usize>unchecked(t.ts[i - 1]);
  let n = unchecked(t.tl[i - 1]);
  if (n > 1 && ch(p, n - 1) == 58) n--;
  return s.fields.has(nameHash(p, n));
}

/** Removes a live template, reported as evicted (into = 0) or as merged into template `into`. */
function retire(s: Svc, victim: Tpl, report: bool, into: f64): void {
  unlink(s, victim);
  s.count--;
  byId.delete(<u64>victim.id);
  if (victim.json) s.shapes.delete(victim.key);
  else {
    const leaf = s.leaves.get(victim.key);
    const k = leaf.indexOf(victim);
    leaf.splice(k, 1);
    if (leaf.length == 0) s.leaves.delete(victim.key);
    countFields(s, victim, -1);
    if (victim.skel != 0 && s.skels.has(victim.skel) && s.skels.get(victim.skel) === victim) s.skels.delete(victim.skel);
    const h = headOf(victim.key, victim.ntok);
    if (h != 0 && s.heads.has(h)) {
      const hl = s.heads.get(h);
      const k = hl.indexOf(victim);
      if (k >= 0) {
        hl.splice(k, 1);
        if (hl.length == 0) s.heads.delete(h);
      }
    }
  }
  pending.set(<u64>victim.id, victim);
  if (report) {
    unchecked(oEvictedInto[nEvicted] = into);
    unchecked(oEvicted[nEvicted++] = victim.id);
  }
}

let mergeBudget: i32 = 0;

/** After tpl generalised: merges into it the templates of its leaf with its constants whose variables it covers. */
function absorb(s: Svc, tpl: Tpl): void {
  const leaf = s.leaves.get(tpl.key);
  const pp = changetype<usize>(tpl.pat);
  for (let k = leaf.length - 1; k >= 0 && mergeBudget > 0; k--) {
    const u = unchecked(leaf[k]);
    if (u === tpl) continue;
    const up = changetype<usize>(u.pat);
    let covered = true;
    for (let i = 0; i < tpl.ntok && covered; i++) {
      const kind = unchecked(tpl.kind[i]);
      covered = unchecked(tpl.th[i]) == unchecked(u.th[i]) || (unchecked(u.kind[i]) != 0 && (kind == 1 ||
        (kind == 2 && globMatch(pp + <usize>unchecked(tpl.ts[i]), unchecked(tpl.tl[i]), up + <usize>unchecked(u.ts[i]), unchecked(u.tl[i])))));
    }
    if (!covered) continue;
    mergeBudget--;
    retire(s, u, true, tpl.id);
  }
}

function addTpl(s: Svc, t: Tpl, report: bool): void {
  let victim: Tpl | null = null;
  if (!t.json && s.leaves.has(t.key)) {
    const full = s.leaves.get(t.key);
    if (full.length >= LEAF_MAX) {
      let v = unchecked(full[0]);
      for (let i = 1; i < full.length; i++) if (unchecked(full[i]).used < v.used) v = unchecked(full[i]);
      victim = v;
    }
  }
  if (victim === null && s.count >= cap) victim = s.head;
  if (victim !== null) retire(s, victim, report, 0);
  linkTail(s, t);
  t.used = ++tick;
  s.count++;
  byId.set(<u64>t.id, t);
  if (t.json) s.shapes.set(t.key, t);
  else {
    if (s.leaves.has(t.key)) s.leaves.get(t.key).push(t);
    else {
      const leaf = new Array<Tpl>();
      leaf.push(t);
      s.leaves.set(t.key, leaf);
    }
    countFields(s, t, 1);
    if (t.skel != 0 && !s.skels.has(t.skel)) s.skels.set(t.skel, t);
    const h = headOf(t.key, t.ntok);
    if (h != 0) {
      if (!s.heads.has(h)) s.heads.set(h, new Array<Tpl>());
      const hl = s.heads.get(h);
      hl.push(t);
      if (hl.length > LEAF_MAX) hl.shift();
    }
  }
}

/** tokens.ts isWord: two or more letters, or a name in capitals (then capitals, digits, _ or -, ending in a capital or digit), and at most one trailing . , ; : ! ? */
function isWordTok(p: usize, len: i32): bool {
  const s = len > 0 && ch(p, 0) == 34 ? 1 : 0;
  let e = len;
  if (e - s > 2) {
    const c = ch(p, e - 1);
    if (c == 46 || c == 44 || c == 59 || c == 58 || c == 33 || c == 63) e--;
  }
  if (e - s < 2) return false;
  let letters = true;
  let caps = true;
  for (let i = s; i < e; i++) {
    const c = ch(p, i);
    if (!isAlpha(c)) letters = false;
    if (!(isUpper(c) || ((isDigit(c) || c == 95 || c == 45) && i >= s + 2))) caps = false;
  }
  const z = ch(p, e - 1);
  return letters || (caps && (isUpper(z) || isDigit(z)));
}
/** tokens.ts wordsDiffer: do a[0, la) and b[0, lb) differ in more than their digits? */
function wordsDiffer(a: usize, la: i32, b: usize, lb: i32): bool {
  let i = 0;
  let j = 0;
  while (true) {
    while (i < la && isDigit(ch(a, i))) i++;
    while (j < lb && isDigit(ch(b, j))) j++;
    if (i == la || j == lb) return i != la || j != lb;
    if (ch(a, i++) != ch(b, j++)) return true;
  }
  return true;
}

/** tokens.ts isRunToken: holds <*> and is not key=value. */
function isRunTok(p: usize, len: i32, kind: u8): bool {
  if (kind == 0) return false;
  for (let i = 0; i < len; i++) if (ch(p, i) == 61) return false;
  return true;
}

const RUN_KEY: u64 = 0x5bd1e9955bd1e995;
/** tokens.ts skeletonOf, as a hash of the constant tokens' hashes and one mark per variable run; 0 when not indexed. */
function skelHash(n: i32, base: usize, starts: StaticArray<i32>, lens: StaticArray<i32>, h: StaticArray<u64>, kinds: StaticArray<u8>): u64 {
  let k: u64 = 0x84222325cbf29ce4;
  let runs = 0;
  let consts = 0;
  let inRun = false;
  for (let i = 0; i < n; i++) {
    if (isRunTok(base + <usize>unchecked(starts[i]), unchecked(lens[i]), unchecked(kinds[i]))) {
      if (!inRun) {
        k = (k ^ RUN_KEY) * 0x100000001b3;
        k ^= k >>> 31;
        runs++;
        inRun = true;
      }
    } else {
      // key=value by its key alone (tokens.ts skeletonOf)
      const tp = base + <usize>unchecked(starts[i]);
      const tl = unchecked(lens[i]);
      let eq = 0;
      while (eq < tl && ch(tp, eq) != 61) eq++;
      const th = eq > 0 && eq < tl - 1 ? hashBytes(tp, eq + 1) : unchecked(h[i]);
      k = (k ^ th) * 0x100000001b3;
      k ^= k >>> 31;
      consts++;
      inRun = false;
    }
  }
  if (runs == 0 || consts == 0) return 0;
  return k == 0 ? 1 : k;
}

/** The differing word positions taken for constants (a copy of dPos: sameWord's diffsOf overwrites that). */
const enumPos = new StaticArray<i32>(MAX_TOKENS + 1);
let enumN: i32 = 0;
@inline function isEnumPos(i: i32): bool {
  for (let k = 0; k < enumN; k++) if (unchecked(enumPos[k]) == i) return true;
  return false;
}

/** reference.ts family: the templates of tpl's leaf that differ from it only by the words at enumPos (into fam). */
const fam = new Array<Tpl>();
function family(leaf: Array<Tpl>, tpl: Tpl): void {
  fam.length = 0;
  for (let j = 0; j < leaf.length; j++) {
    const u = unchecked(leaf[j]);
    let words = true;
    for (let k = 0; k < enumN && words; k++) {
      const p = unchecked(enumPos[k]);
      words = isWordTok(changetype<usize>(u.pat) + <usize>unchecked(u.ts[p]), unchecked(u.tl[p]));
    }
    if (!words) continue;
    let same = true;
    for (let i = 0; i < tpl.ntok && same; i++) if (!isEnumPos(i) && unchecked(u.th[i]) != unchecked(tpl.th[i])) same = false;
    if (same) fam.push(u);
  }
}

/** reference.ts fewWords: has every position of enumPos held fewer than ENUM_MAX distinct words in fam? */
function fewWords(): bool {
  for (let k = 0; k < enumN; k++) {
    const p = unchecked(enumPos[k]);
    let distinct = 0;
    for (let a = 0; a < fam.length; a++) {
      const h = unchecked(unchecked(fam[a]).th[p]);
      let seen = false;
      for (let b = 0; b < a && !seen; b++) seen = unchecked(unchecked(fam[b]).th[p]) == h;
      if (!seen) distinct++;
    }
    if (distinct >= enumMax) return false;
  }
  return true;
}

/** reference.ts similarity of t to the current line: sEq / sDen (non-wildcard positions), sWild. */
let sEq: i64 = 0;
let sDen: i64 = 1;
let sWild: i32 = 0;
function simOf(t: Tpl, ntok: i32): void {
  const mb = changetype<usize>(mbuf);
  const pp = changetype<usize>(t.pat);
  let eq = 0;
  let wild = 0;
  for (let i = 0; i < ntok; i++) {
    const kind = unchecked(t.kind[i]);
    if (kind == 1) wild++;
    else if (unchecked(t.th[i]) == unchecked(lH[i])) eq++;
    else if (kind == 2 && globMatch(pp + <usize>unchecked(t.ts[i]), unchecked(t.tl[i]), mb + <usize>unchecked(lMS[i]), unchecked(lML[i]))) eq++;
    else if (sameKey(pp + <usize>unchecked(t.ts[i]), unchecked(t.eqAt[i]), mb + <usize>unchecked(lMS[i]), unchecked(lML[i]))) eq++;
    else if (unchecked(t.kv[i]) != 0 && unchecked(t.th[i - 1]) == unchecked(lH[i - 1])) eq++;
  }
  const den = ntok - wild;
  sEq = den == 0 ? 1 : <i64>eq;
  sDen = den == 0 ? 1 : <i64>den;
  sWild = wild;
}
@inline function accepts(eq: i64, den: i64): bool {
  return eq * SIM_DEN >= simNum * den || (den - eq <= 1 && eq >= 2);
}

/** reference.ts diffs: positions t does not cover in the current line (dN), those holding a word in both (dPos, dWords of them). */
let dN: i32 = 0;
let dWords: i32 = 0;
const dPos = new StaticArray<i32>(MAX_TOKENS + 1);
/** reference.ts diffs' tplWordPos: differing positions where t holds a word, whatever the line holds (dTplN of them). */
const dTplPos = new StaticArray<i32>(MAX_TOKENS + 1);
let dTplN: i32 = 0;
function diffsOf(s: Svc, t: Tpl, ntok: i32): void {
  const mb = changetype<usize>(mbuf);
  const pp = changetype<usize>(t.pat);
  dN = 0;
  dWords = 0;
  dTplN = 0;
  for (let i = 0; i < ntok; i++) {
    const kind = unchecked(t.kind[i]);
    if (kind == 1 || unchecked(t.th[i]) == unchecked(lH[i])) continue;
    const ta = pp + <usize>unchecked(t.ts[i]);
    const la = mb + <usize>unchecked(lMS[i]);
    if (kind == 2 && globMatch(ta, unchecked(t.tl[i]), la, unchecked(lML[i]))) continue;
    dN++;
    if (isWordTok(ta, unchecked(t.tl[i]))) {
      unchecked(dTplPos[dTplN++] = i);
      if (!afterField(s, t, i) && isWordTok(la, unchecked(lML[i])) && wordsDiffer(ta, unchecked(t.tl[i]), la, unchecked(lML[i]))) unchecked(dPos[dWords++] = i);
    }
  }
}

/** reference.ts sameWord: the leaf's template (not best) with the line's words at enumPos that accepts the line and differs in no word. */
function sameWord(s: Svc, leaf: Array<Tpl>, best: Tpl, ntok: i32): Tpl | null {
  let alt: Tpl | null = null;
  let aEq: i64 = 0;
  let aDen: i64 = 1;
  let aWild: i32 = -1;
  for (let j = 0; j < leaf.length; j++) {
    const u = unchecked(leaf[j]);
    if (u === best) continue;
    let holds = true;
    for (let k = 0; k < enumN && holds; k++) {
      const p = unchecked(enumPos[k]);
      holds = unchecked(u.th[p]) == unchecked(lH[p]);
    }
    if (!holds) continue;
    simOf(u, ntok);
    const eq = sEq;
    const den = sDen;
    const wild = sWild;
    if (!accepts(eq, den)) continue;
    diffsOf(s, u, ntok);
    if (dWords > 0) continue;
    const lhs = eq * aDen;
    const rhs = aEq * den;
    if (alt === null || lhs > rhs || (lhs == rhs && wild > aWild)) {
      alt = u;
      aEq = eq;
      aDen = den;
      aWild = wild;
    }
  }
  return alt;
}

/** merges.ts reskeleton: tpl's skeleton became sk; a template that already holds it merges into tpl. */
function reskeleton(s: Svc, tpl: Tpl, sk: u64): void {
  if (sk == tpl.skel) return;
  if (tpl.skel != 0 && s.skels.has(tpl.skel) && s.skels.get(tpl.skel) === tpl) s.skels.delete(tpl.skel);
  tpl.skel = sk;
  if (sk == 0) return;
  if (s.skels.has(sk)) {
    const u = s.skels.get(sk);
    if (u.ntok != tpl.ntok && mergeBudget > 0) {
      mergeBudget--;
      retire(s, u, true, tpl.id);
    }
  }
  if (!s.skels.has(sk)) s.skels.set(sk, tpl);
}

// ---- the current line --------------------------------------------------------------------------------
const lRawS = new StaticArray<i32>(MAX_TOKENS + 1); // raw token start (relative to the body)
const lRawL = new StaticArray<i32>(MAX_TOKENS + 1);
const lMS = new StaticArray<i32>(MAX_TOKENS + 1); // masked token in mbuf
const lML = new StaticArray<i32>(MAX_TOKENS + 1);
const lH = new StaticArray<u64>(MAX_TOKENS + 1);
const lKind = new StaticArray<u8>(MAX_TOKENS + 1);
const lVS = new StaticArray<i32>(MAX_TOKENS + 1);
const lVE = new StaticArray<i32>(MAX_TOKENS + 1);
let lN: i32 = 0;
let lTrunc = false;

const STATEMENT = packStr('tatement'); // after the s, before the colon
function isStatement(p: usize, n: i32): bool {
  if (n != 10 || ch(p, 9) != 58 || (ch(p, 0) | 32) != 115) return false;
  let v: u64 = 0;
  for (let i = 8; i >= 1; i--) {
    const c = ch(p, i);
    if (!isAlpha(c)) return false;
    v = (v << 8) | <u64>(c | 32);
  }
  return v == STATEMENT;
}

function tokenize(p: usize, realEnd: i32): void {
  const end = realEnd < MATCH_BYTES ? realEnd : MATCH_BYTES;
  lTrunc = realEnd > MATCH_BYTES;
  lN = 0;
  mpos = 0;
  let i = 0;
  const mb = changetype<usize>(mbuf);
  let rest = false;
  let dates = false;
  while (i < end) {
    while (i < end && isSep(ch(p, i))) i++;
    if (i >= end) break;
    if (lN == MAX_TOKENS) { lTrunc = true; break; }
    const s = i;
    const m0 = mpos;
    if (rest) {
      // tokenize.ts isStatement: the rest of the line is one value
      i = end;
      while (i > s && isSep(ch(p, i - 1))) i--;
      mwild();
      gFast = false;
      gVarS = 0;
      gVarE = i - s;
      rest = false;
    } else {
      i = tokenEnd(p, s, end);
      maskToken(p + <usize>s, i - s, tokQs, tokQe);
      rest = isStatement(p + <usize>s, i - s);
    }
    const ml = mpos - m0;
    unchecked(lRawS[lN] = s);
    unchecked(lRawL[lN] = i - s);
    unchecked(lMS[lN] = m0);
    unchecked(lML[lN] = ml);
    if (gFast) {
      unchecked(lH[lN] = gHash);
      unchecked(lKind[lN] = gKind);
    } else {
      unchecked(lH[lN] = hashBytes(mb + <usize>m0, ml));
      unchecked(lKind[lN] = kindOf(mb + <usize>m0, ml));
    }
    unchecked(lVS[lN] = gVarS);
    unchecked(lVE[lN] = gVarE);
    // a date number has a digit, so it took the slow path (dates.ts isDateNumber)
    const dn = !gFast && i - s <= 16 && isDigit(ch(p, s)) && isDateNumber(p + <usize>s, i - s);
    unchecked(lDateNum[lN] = dn);
    if (dn) dates = true;
    lN++;
  }
  if (dates) dateWords(p);
  if (lTrunc) {
    const m0 = mpos;
    mwild();
    unchecked(lRawS[lN] = end);
    unchecked(lRawL[lN] = 0);
    unchecked(lMS[lN] = m0);
    unchecked(lML[lN] = 3);
    unchecked(lH[lN] = hashBytes(mb + <usize>m0, 3));
    unchecked(lKind[lN] = 1);
    unchecked(lVS[lN] = -1);
    unchecked(lVE[lN] = -1);
    lN++;
  }
}

// ---- dates.ts: the words of a date written in words ------------------------------------------------
/** Length of p[0, n) without one trailing ',' or '.'. */
@inline function bareLen(p: usize, n: i32): i32 {
  if (n > 1) {
    const c = ch(p, n - 1);
    if (c == 44 || c == 46) return n - 1;
  }
  return n;
}
@inline function prefixBit(p: usize): u64 {
  const v = (<u32>(ch(p, 0) | 32) << 16) | (<u32>(ch(p, 1) | 32) << 8) | <u32>(ch(p, 2) | 32);
  return <u64>1 << <u64>((v * 0x9e3779b1) >>> 26);
}
function isDateName(p: usize, len: i32): bool {
  const n = bareLen(p, len);
  if (n < 3 || n > 9 || (DATE_PREFIX & prefixBit(p)) == 0) return false;
  for (let i = 0; i < n; i++) if (!isAlpha(ch(p, i))) return false;
  return DATE_NAMES.has(hashLower(p, n));
}
function isDateNumber(p: usize, len: i32): bool {
  const n = bareLen(p, len);
  if (n == 0 || n > 15 || !isDigit(ch(p, 0)) || !isDigit(ch(p, n - 1))) return false;
  let seps = 0;
  for (let i = 0; i < n; i++) {
    const c = ch(p, i);
    if (c == 58 || c == 45 || c == 47 || c == 46) seps++;
    else if (!isDigit(c)) return false;
  }
  return seps > 0 || n <= 2 || n == 4;
}
function isTime(p: usize, len: i32): bool {
  if (!isDateNumber(p, len)) return false;
  for (let i = 0; i < len; i++) if (ch(p, i) == 58) return true;
  return false;
}
function isZone(p: usize, len: i32): bool {
  if (len < 3 || len > 5) return false;
  for (let i = 0; i < len; i++) if (!isUpper(ch(p, i))) return false;
  return true;
}
const dateMark = new StaticArray<i32>(MAX_TOKENS + 1);
/** per token of the current line: is it a date number (dates.ts isDateNumber)? */
const lDateNum = new StaticArray<bool>(MAX_TOKENS + 1);
/** dates.ts dateWords over the current line's raw tokens (body at p): each date word becomes `<*>` (and its ',' or '.'), in place in mbuf. */
function dateWords(p: usize): void {
  const n = lN;
  for (let i = n - 1; i >= 0; i--) {
    unchecked(dateMark[i] = 0);
    // a name or a zone is a constant next to a masked date number (or a marked name): cheap tests first
    if (unchecked(lKind[i]) != 0) continue;
    const t = p + <usize>unchecked(lRawS[i]);
    const len = unchecked(lRawL[i]);
    const prevNum = i > 0 && unchecked(lDateNum[i - 1]);
    let m = 0;
    if (prevNum || (i + 1 < n && (unchecked(dateMark[i + 1]) > 0 || unchecked(lDateNum[i + 1])))) {
      if (isDateName(t, len)) m = bareLen(t, len);
    }
    if (m == 0 && prevNum && i + 1 < n && isZone(t, len) && isTime(p + <usize>unchecked(lRawS[i - 1]), unchecked(lRawL[i - 1])) &&
      unchecked(lRawL[i + 1]) == 4 && unchecked(lDateNum[i + 1])) m = len;
    unchecked(dateMark[i] = m);
    if (m == 0) continue;
    // the name is letters (3 bytes or more), so `<*>` and its punctuation fit where the token was
    const mb = changetype<usize>(mbuf) + <usize>unchecked(lMS[i]);
    store<u8>(mb, 60);
    store<u8>(mb + 1, 42);
    store<u8>(mb + 2, 62);
    if (len > m) store<u8>(mb + 3, ch(t, m));
    const ml = 3 + len - m;
    unchecked(lML[i] = ml);
    unchecked(lH[i] = hashBytes(mb, ml));
    unchecked(lKind[i] = ml == 3 ? 1 : 2);
    unchecked(lVS[i] = 0);
    unchecked(lVE[i] = m);
  }
}

const LEN_KEY: u64 = 0x9e3779b97f4a7c15;
/** tokens.ts headOf: the leaf key without its token count (0 for a template of no tokens: not listed). */
@inline function headOf(key: u64, n: i32): u64 { return n == 0 ? 0 : key ^ (<u64>n * LEN_KEY); }

/** Key of a leaf: token count and the leading tokens, each by its key alone when it is key=value. */
function leafKey(n: i32, base: usize, starts: StaticArray<i32>, lens: StaticArray<i32>, h: StaticArray<u64>, kinds: StaticArray<u8>): u64 {
  let k: u64 = 0xcbf29ce484222325;
  for (let i = 0; i < PREFIX_TOKENS && i < n; i++) {
    let t = unchecked(kinds[i]) == 0 ? unchecked(h[i]) : WILD_KEY;
    if (t != WILD_KEY) {
      const p = base + <usize>unchecked(starts[i]);
      const l = unchecked(lens[i]);
      let eq = -1;
      for (let j = 0; j < l; j++) {
        const c = ch(p, j);
        if (isDigit(c)) { t = WILD_KEY; break; }
        if (c == 61 && eq < 0) eq = j;
      }
      if (t != WILD_KEY && eq >= 0 && eq < l - 1) t = hashBytes(p, eq + 1);
    }
    k = (k ^ t) * 0x100000001b3;
    k ^= k >>> 29;
  }
  return k ^ (<u64>n * LEN_KEY);
}

/** tokens.ts sameKey: template token a (its '=' at k, or 0) and line token b have the same key and non-empty values. */
@inline function sameKey(a: usize, k: i32, b: usize, lb: i32): bool {
  return k > 0 && k < lb - 1 && ch(b, k) == 61 && memory.compare(a, b, <usize>k) == 0;
}

/** tokens.ts isKeyToken: an identifier and a colon. */
function isKeyToken(p: usize, n: i32): bool {
  if (n < 2 || ch(p, n - 1) != 58) return false;
  const c0 = ch(p, 0);
  if (!isAlpha(c0) && c0 != 95) return false;
  for (let i = 1; i < n - 1; i++) {
    const c = ch(p, i);
    if (!isAlpha(c) && !isDigit(c) && c != 95 && c != 46 && c != 45) return false;
  }
  return true;
}

/** tokens.ts valuePositions, over the tokens [starts[i], starts[i] + lens[i]) of p. */
function valuePositions(n: i32, p: usize, starts: StaticArray<i32>, lens: StaticArray<i32>): StaticArray<u8> {
  const kv = new StaticArray<u8>(n);
  let prev = false; // key at i - 1
  let k3 = false; // key at i - 3
  let k2 = false;
  let cur = n > 0 && isKeyToken(p + <usize>unchecked(starts[0]), unchecked(lens[0]));
  for (let i = 0; i < n; i++) {
    const next = i + 1 < n && isKeyToken(p + <usize>unchecked(starts[i + 1]), unchecked(lens[i + 1]));
    if (i > 0 && prev && !cur && (i + 1 < n ? next : i >= 3 && k3)) unchecked(kv[i] = 1);
    k3 = k2;
    k2 = prev;
    prev = cur;
    cur = next;
  }
  return kv;
}

/** Builds a text template from token byte ranges in `src` (tokens joined by one space). */
function makeText(id: f64, svc: i32, n: i32, src: usize, starts: StaticArray<i32>, lens: StaticArray<i32>): Tpl {
  const t = new Tpl();
  t.id = id;
  t.svc = svc;
  t.ntok = n;
  let total = n > 0 ? n - 1 : 0;
  for (let i = 0; i < n; i++) total += unchecked(lens[i]);
  const pat = new StaticArray<u8>(total);
  const ts = new StaticArray<i32>(n);
  const tl = new StaticArray<i32>(n);
  const th = new StaticArray<u64>(n);
  const kind = new StaticArray<u8>(n);
  const pp = changetype<usize>(pat);
  let o = 0;
  for (let i = 0; i < n; i++) {
    if (i > 0) unchecked(pat[o++] = 32);
    const l = unchecked(lens[i]);
    memory.copy(pp + <usize>o, src + <usize>unchecked(starts[i]), <usize>l);
    unchecked(ts[i] = o);
    unchecked(tl[i] = l);
    unchecked(th[i] = hashBytes(pp + <usize>o, l));
    unchecked(kind[i] = kindOf(pp + <usize>o, l));
    o += l;
  }
  t.pat = pat;
  t.ts = ts;
  t.tl = tl;
  t.th = th;
  t.kind = kind;
  t.kv = valuePositions(n, pp, ts, tl);
  const eqAt = new StaticArray<i32>(n);
  for (let i = 0; i < n; i++) {
    const q = pp + <usize>unchecked(ts[i]);
    const l = unchecked(tl[i]);
    let k = 0;
    while (k < l && ch(q, k) != 61) k++;
    if (k > 0 && k < l - 1) unchecked(eqAt[i] = k);
  }
  t.eqAt = eqAt;
  t.key = leafKey(n, pp, ts, tl, th, kind);
  t.skel = skelHash(n, pp, ts, tl, th, kind);
  return t;
}

function makeJson(id: f64, svc: i32, key: u64, src: usize, len: i32): Tpl {
  const t = new Tpl();
  t.id = id;
  t.svc = svc;
  t.json = true;
  t.key = key;
  const pat = new StaticArray<u8>(len);
  memory.copy(changetype<usize>(pat), src, <usize>len);
  t.pat = pat;
  return t;
}

// generalisation scratch: the rebuilt tokens of a template
let gbuf = new StaticArray<u8>(1024);
const gS = new StaticArray<i32>(MAX_TOKENS + 1);
const gL = new StaticArray<i32>(MAX_TOKENS + 1);

/** Writes generalize(a, b) to gbuf at o; returns the new length. */
function generalize(a: usize, la: i32, b: usize, lb: i32, o: i32): i32 {
  const m = la < lb ? la : lb;
  let p = 0;
  while (p < m && ch(a, p) == ch(b, p)) p++;
  while (p > 0 && !isGenDelim(ch(a, p - 1))) p--;
  let s = 0;
  while (s < m - p && ch(a, la - 1 - s) == ch(b, lb - 1 - s)) s++;
  while (s > 0 && !isGenDelim(ch(a, la - s))) s--;
  const g = changetype<usize>(gbuf) + <usize>o;
  memory.copy(g, a, <usize>p);
  store<u8>(g + <usize>p, 60);
  store<u8>(g + <usize>p + 1, 42);
  store<u8>(g + <usize>p + 2, 62);
  memory.copy(g + <usize>p + 3, a + <usize>(la - s), <usize>s);
  return p + 3 + s;
}

function literalPrefix(p: usize, len: i32): i32 {
  for (let i = 0; i + 3 <= len; i++) if (isStar(p, i, len)) return i;
  return len;
}
function literalSuffix(p: usize, len: i32): i32 {
  for (let i = len - 3; i >= 0; i--) if (isStar(p, i, len)) return len - i - 3;
  return len;
}

// ---- mining ------------------------------------------------------------------------------------------
let curPc: i32 = 0;
let curBase: i32 = 0;
let curBs: i32 = 0;
let curP: usize = 0;

function addParam(slot: i32, s0: i32, e0: i32): void {
  if (curPc >= MAX_PARAMS) return;
  const k = curBase + curPc;
  unchecked(oSlot[k] = <u16>slot);
  unchecked(oStart[k] = curBs + s0);
  unchecked(oLen[k] = e0 - s0);
  unchecked(oNum[k] = parseNumber(curP, s0, e0));
  curPc++;
}

/** params.ts skeletonParams: the current line joined template t of another length with the same skeleton. */
function skeletonParams(t: Tpl): void {
  const mb = changetype<usize>(mbuf);
  const tp = changetype<usize>(t.pat);
  const n = lN;
  const last = lTrunc ? n - 1 : n;
  let ti = 0;
  let i = 0;
  while (i < last) {
    if (!isRunTok(mb + <usize>unchecked(lMS[i]), unchecked(lML[i]), unchecked(lKind[i]))) {
      if (unchecked(lKind[i]) != 0 && unchecked(lVS[i]) >= 0) addParam(ti, unchecked(lRawS[i]) + unchecked(lVS[i]), unchecked(lRawS[i]) + unchecked(lVE[i]));
      i++;
      ti++;
      continue;
    }
    let ie = i;
    while (ie < n && isRunTok(mb + <usize>unchecked(lMS[ie]), unchecked(lML[ie]), unchecked(lKind[ie]))) ie++;
    let te = ti;
    while (te < t.ntok && isRunTok(tp + <usize>unchecked(t.ts[te]), unchecked(t.tl[te]), unchecked(t.kind[te]))) te++;
    for (let j = i; j < ie && j < last; j++) {
      if (unchecked(lVS[j]) < 0) continue;
      const d = j - i < te - ti - 1 ? j - i : te - ti - 1;
      addParam(ti + d, unchecked(lRawS[j]) + unchecked(lVS[j]), unchecked(lRawS[j]) + unchecked(lVE[j]));
    }
    i = ie;
    ti = te;
  }
}

/** tokens.ts isPhraseWord: letters (an inner ' or - allowed), then at most one of . , ; : ! ? */
function isPhraseWordTok(p: usize, len: i32): bool {
  let n = len;
  if (n > 1) {
    const c = ch(p, n - 1);
    if (c == 46 || c == 44 || c == 59 || c == 58 || c == 33 || c == 63) n--;
  }
  if (n == 0 || !isAlpha(ch(p, 0)) || !isAlpha(ch(p, n - 1))) return false;
  for (let i = 1; i < n - 1; i++) {
    const c = ch(p, i);
    if (!isAlpha(c) && c != 39 && c != 45) return false;
  }
  return true;
}
/** tokens.ts constantsAround: constant tokens of t outside [a, b). */
function constantsAround(t: Tpl, a: i32, b: i32): i32 {
  let c = 0;
  for (let i = 0; i < t.ntok; i++) if ((i < a || i >= b) && unchecked(t.kind[i]) == 0) c++;
  return c;
}
/** tokens.ts phraseContext: two constants around the phrase, or a constant first token alone before a phrase that ends the line. */
function phraseContext(t: Tpl, p: i32, q: i32): bool {
  const c = constantsAround(t, p, t.ntok - q);
  return c >= 2 || (c == 1 && p == 1 && q == 0);
}
/** tokens.ts phraseRun over template t's tokens [a, b). */
function tplPhrase(t: Tpl, a: i32, b: i32): bool {
  if (a >= b) return false;
  const pp = changetype<usize>(t.pat);
  for (let i = a; i < b; i++) if (!isPhraseWordTok(pp + <usize>unchecked(t.ts[i]), unchecked(t.tl[i]))) return false;
  return true;
}
/** tokens.ts phraseRun over the current line's tokens [a, b). */
function linePhrase(a: i32, b: i32): bool {
  if (a >= b) return false;
  const mb = changetype<usize>(mbuf);
  for (let i = a; i < b; i++) if (!isPhraseWordTok(mb + <usize>unchecked(lMS[i]), unchecked(lML[i]))) return false;
  return true;
}
/** tokens.ts coversToken: template t's token i takes line token j one for one. */
function coversTok(t: Tpl, i: i32, j: i32): bool {
  const kind = unchecked(t.kind[i]);
  if (kind == 1 || unchecked(t.th[i]) == unchecked(lH[j])) return true;
  const mb = changetype<usize>(mbuf);
  const ta = changetype<usize>(t.pat) + <usize>unchecked(t.ts[i]);
  if (kind == 2 && globMatch(ta, unchecked(t.tl[i]), mb + <usize>unchecked(lMS[j]), unchecked(lML[j]))) return true;
  return sameKey(ta, unchecked(t.eqAt[i]), mb + <usize>unchecked(lMS[j]), unchecked(lML[j]));
}

// tokens.ts runCovers: the alignment of the current line to a template whose <*> runs take one or more tokens
const rAt = new StaticArray<i32>(MAX_TOKENS + 2);
const rEnd = new StaticArray<i32>(MAX_TOKENS + 2);
function runCovers(t: Tpl, n: i32): bool {
  const m = t.ntok;
  let i = 0;
  let j = 0;
  let starI = -1;
  let starS = -1;
  let starJ = 0;
  while (j < n) {
    if (i < m && unchecked(t.kind[i]) == 1) {
      const rs = i;
      while (i < m && unchecked(t.kind[i]) == 1) i++;
      unchecked(rAt[j] = rs);
      unchecked(rEnd[j] = i);
      starI = i;
      starS = rs;
      starJ = ++j;
    } else if (i < m && coversTok(t, i, j)) {
      unchecked(rAt[j] = i);
      unchecked(rEnd[j] = -1);
      i++;
      j++;
    } else if (starI >= 0) {
      unchecked(rAt[starJ] = starS);
      unchecked(rEnd[starJ] = starI);
      j = ++starJ;
      i = starI;
    } else return false;
  }
  return i == m;
}
/** coversTok with template u's token j in place of the line's. */
function coversTokT(t: Tpl, i: i32, u: Tpl, j: i32): bool {
  const kind = unchecked(t.kind[i]);
  if (kind == 1 || unchecked(t.th[i]) == unchecked(u.th[j])) return true;
  const ta = changetype<usize>(t.pat) + <usize>unchecked(t.ts[i]);
  const ua = changetype<usize>(u.pat) + <usize>unchecked(u.ts[j]);
  if (kind == 2 && globMatch(ta, unchecked(t.tl[i]), ua, unchecked(u.tl[j]))) return true;
  return sameKey(ta, unchecked(t.eqAt[i]), ua, unchecked(u.tl[j]));
}
/** runCovers with template u's tokens in place of the line's (no alignment kept). */
function runCoversTpl(t: Tpl, u: Tpl): bool {
  const m = t.ntok;
  const n = u.ntok;
  let i = 0;
  let j = 0;
  let starI = -1;
  let starJ = 0;
  while (j < n) {
    if (i < m && unchecked(t.kind[i]) == 1) {
      while (i < m && unchecked(t.kind[i]) == 1) i++;
      starI = i;
      starJ = ++j;
    } else if (i < m && coversTokT(t, i, u, j)) {
      i++;
      j++;
    } else if (starI >= 0) {
      j = ++starJ;
      i = starI;
    } else return false;
  }
  return i == m;
}
function constantsOf(t: Tpl): i32 {
  let c = 0;
  for (let i = 0; i < t.ntok; i++) if (unchecked(t.kind[i]) != 1) c++;
  return c;
}
/** params.ts tokenParam: line token j taken one for one by template t's token i (kind), reported at slot. */
function tokenParam(t: Tpl, i: i32, kind: u8, j: i32, slot: i32): void {
  if (kind == 0) return;
  const off = unchecked(lRawS[j]);
  const rl = unchecked(lRawL[j]);
  const vs = unchecked(lVS[j]);
  if (vs >= 0) addParam(slot, off + vs, off + unchecked(lVE[j]));
  else if (kind == 1) addParam(slot, off, off + rl);
  else {
    const ta = changetype<usize>(t.pat) + <usize>unchecked(t.ts[i]);
    const tlen = unchecked(t.tl[i]);
    const lp = literalPrefix(ta, tlen);
    const ls = literalSuffix(ta, tlen);
    if (lp + ls < rl) addParam(slot, off + lp, off + rl - ls);
    else addParam(slot, off, off + rl);
  }
}
/** params.ts runParams over the alignment runCovers left in rAt / rEnd. */
function runParams(t: Tpl): void {
  const n = lTrunc ? lN - 1 : lN;
  let j = 0;
  while (j < n) {
    const i = unchecked(rAt[j]);
    const re = unchecked(rEnd[j]);
    if (re < 0) {
      tokenParam(t, i, unchecked(t.kind[i]), j, i);
      j++;
      continue;
    }
    let je = j;
    while (je < n && unchecked(rAt[je]) == i && unchecked(rEnd[je]) == re) je++;
    for (let k = j; k < je; k++) {
      if (i + (k - j) == re - 1 && je - k > 1) {
        addParam(re - 1, unchecked(lRawS[k]), unchecked(lRawS[je - 1]) + unchecked(lRawL[je - 1]));
        break;
      }
      tokenParam(t, i, 1, k, i + (k - j));
    }
    j = je;
  }
}

// tokens.ts looseCovers, of template t against the current line (u null) or against template u
@inline function kindU(u: Tpl | null, j: i32): u8 { return u !== null ? unchecked(u.kind[j]) : unchecked(lKind[j]); }
@inline function hashU(u: Tpl | null, j: i32): u64 { return u !== null ? unchecked(u.th[j]) : unchecked(lH[j]); }
@inline function addrU(u: Tpl | null, j: i32): usize {
  return u !== null ? changetype<usize>(u.pat) + <usize>unchecked(u.ts[j]) : changetype<usize>(mbuf) + <usize>unchecked(lMS[j]);
}
@inline function lenU(u: Tpl | null, j: i32): i32 { return u !== null ? unchecked(u.tl[j]) : unchecked(lML[j]); }
/** tokens.ts isLooseValue: token j of u (the current line when null) is a variable that is no key=value, or a constant without a letter. */
function isLooseValue(u: Tpl | null, j: i32): bool {
  const p = addrU(u, j);
  const n = lenU(u, j);
  if (kindU(u, j) != 0) {
    for (let i = 0; i < n; i++) if (ch(p, i) == 61) return false;
    return true;
  }
  for (let i = 0; i < n; i++) if (isAlpha(ch(p, i))) return false;
  return true;
}
/** tokens.ts decorated over tokens [a, b) of u (the current line when null): their values, 0 when empty, -1 when no value with its decoration. */
function decorated(u: Tpl | null, a: i32, b: i32): i32 {
  let vals = 0;
  let prev = false;
  for (let i = a; i < b; i++) {
    const v = isLooseValue(u, i);
    if (v) vals++;
    else if (!prev || !isUnit(addrU(u, i), lenU(u, i))) return -1;
    prev = v;
  }
  return vals;
}
/** tokens.ts isUnit: p[0, n) has at most three letters and is no key. */
function isUnit(p: usize, n: i32): bool {
  const c = ch(p, n - 1);
  if (c == 58 || c == 61) return false;
  let letters = 0;
  for (let i = 0; i < n; i++) if (isAlpha(ch(p, i))) letters++;
  return letters <= 3;
}
/** tokens.ts looseSegment: template t's tokens [a, b) against u's (the current line's) [c, d); slots into rAt. */
function looseSegment(t: Tpl, a: i32, b: i32, u: Tpl | null, c: i32, d: i32): bool {
  const tv = decorated(t, a, b);
  const lv = decorated(u, c, d);
  if (tv < 0 || lv < 0) return false;
  if ((b - a - tv == 0) != (d - c - lv == 0)) {
    let same = tv == lv;
    let j = c;
    for (let i = a; same && i < b; i++) {
      if (!isLooseValue(t, i)) continue;
      while (!isLooseValue(u, j)) j++;
      same = unchecked(t.th[i]) == hashU(u, j);
      j++;
    }
    if (same) return false;
  }
  let i = a;
  let last = -1;
  for (let j = c; j < d; j++) {
    if (kindU(u, j) == 0) {
      unchecked(rAt[j] = -1);
      continue;
    }
    while (i < b && unchecked(t.kind[i]) == 0) i++;
    if (i < b) last = i++;
    unchecked(rAt[j] = last);
  }
  return true;
}
/** tokens.ts looseCovers: template t against u (n tokens, lineVars variables; the current line when null); the number of constants matched, else 0; slots into rAt. */
function looseCovers(t: Tpl, u: Tpl | null, n: i32, lineVars: i32): i32 {
  const m = t.ntok;
  let vars = 0;
  for (let i = 0; i < m; i++) if (unchecked(t.kind[i]) != 0) vars++;
  if (vars + lineVars == 0) return 0;
  const tp = changetype<usize>(t.pat);
  let pi = -1;
  let pj = -1;
  let anchors = 0;
  while (true) {
    let ni = pi + 1;
    let nj = n;
    let skipped = 0;
    for (; ni < m; ni++) {
      if (unchecked(t.kind[ni]) != 0) continue;
      const th = unchecked(t.th[ni]);
      const ta = tp + <usize>unchecked(t.ts[ni]);
      const ek = unchecked(t.eqAt[ni]);
      let q = pj + 1;
      while (q < n && !(kindU(u, q) == 0 && (hashU(u, q) == th || sameKey(ta, ek, addrU(u, q), lenU(u, q))))) {
        if (!isLooseValue(u, q) && !isUnit(addrU(u, q), lenU(u, q))) q = n;
        else q++;
      }
      if (q < n) {
        nj = q;
        break;
      }
      if (++skipped > vars || (!isLooseValue(t, ni) && !isUnit(ta, unchecked(t.tl[ni])))) return 0;
    }
    if (!looseSegment(t, pi + 1, ni, u, pj + 1, nj)) return 0;
    if (ni == m) break;
    unchecked(rAt[nj] = -1);
    anchors++;
    pi = ni;
    pj = nj;
  }
  return anchors >= 2 ? anchors : 0;
}
/** reference.ts looseIn: the template of head h that takes the current line with an optional part inside a variable (the most constants matched, looseAnchors, then the oldest), its slots in rAt; else null. */
let looseAnchors: i32 = 0;
function looseIn(s: Svc, h: u64, n: i32, lineVars: i32): Tpl | null {
  looseAnchors = 0;
  if (h == 0 || !s.heads.has(h)) return null;
  const hl = s.heads.get(h);
  let found: Tpl | null = null;
  for (let k = 0; k < hl.length; k++) {
    const u = unchecked(hl[k]);
    const a = looseCovers(u, null, n, lineVars);
    if (a > looseAnchors || (a == looseAnchors && a > 0 && u.id < changetype<Tpl>(found).id)) {
      found = u;
      looseAnchors = a;
    }
  }
  if (found !== null) looseCovers(found, null, n, lineVars);
  return found;
}
/** The current line's variables among its first n tokens. */
function lineVarCount(n: i32): i32 {
  let v = 0;
  for (let j = 0; j < n; j++) if (unchecked(lKind[j]) != 0) v++;
  return v;
}
/** merges.ts looseMerge: after tpl generalised, a template of another length under its leading token that it now takes merges into it. */
function looseMerge(s: Svc, tpl: Tpl): void {
  const h = headOf(tpl.key, tpl.ntok);
  if (h == 0 || !s.heads.has(h)) return;
  const hl = s.heads.get(h);
  for (let k = hl.length - 1; k >= 0 && mergeBudget > 0; k--) {
    const u = unchecked(hl[k]);
    if (u === tpl || u.ntok == tpl.ntok) continue;
    let uv = 0;
    for (let i = 0; i < u.ntok; i++) if (unchecked(u.kind[i]) != 0) uv++;
    if (looseCovers(tpl, u, u.ntok, uv) == 0) continue;
    mergeBudget--;
    retire(s, u, true, tpl.id);
  }
}

/** state.ts relength: template t takes the tokens in gbuf (gS / gL, n of them) and moves to the leaf of that length. */
function relength(s: Svc, t: Tpl, n: i32): u64 {
  const old = s.leaves.get(t.key);
  old.splice(old.indexOf(t), 1);
  if (old.length == 0) s.leaves.delete(t.key);
  const head = headOf(t.key, t.ntok);
  const nt = makeText(t.id, t.svc, n, changetype<usize>(gbuf), gS, gL);
  countFields(s, t, -1);
  t.ntok = n;
  t.pat = nt.pat;
  t.ts = nt.ts;
  t.tl = nt.tl;
  t.th = nt.th;
  t.kind = nt.kind;
  t.kv = nt.kv;
  t.eqAt = nt.eqAt;
  t.key = head ^ (<u64>n * LEN_KEY);
  countFields(s, t, 1);
  if (!s.leaves.has(t.key)) s.leaves.set(t.key, new Array<Tpl>());
  let leaf = s.leaves.get(t.key);
  if (leaf.length >= LEAF_MAX && mergeBudget > 0) {
    let v = unchecked(leaf[0]);
    for (let i = 1; i < leaf.length; i++) if (unchecked(leaf[i]).used < v.used) v = unchecked(leaf[i]);
    mergeBudget--;
    retire(s, v, true, 0);
    if (!s.leaves.has(t.key)) s.leaves.set(t.key, new Array<Tpl>());
    leaf = s.leaves.get(t.key);
  }
  leaf.push(t);
  return nt.skel;
}

// merges.ts phrase: siblings of the current line in its head list
const sibT = new Array<Tpl>();
const sibP = new Array<i32>();
const sibQ = new Array<i32>();
function phrase(s: Svc, hl: Array<Tpl>, n: i32): Tpl | null {
  sibT.length = 0;
  sibP.length = 0;
  sibQ.length = 0;
  for (let k = 0; k < hl.length; k++) {
    const u = unchecked(hl[k]);
    const m = u.ntok;
    const lim = (m < n ? m : n) - 1;
    let p = 0;
    while (p < lim && coversTok(u, p, p)) p++;
    let q = 0;
    while (p + q < lim && coversTok(u, m - 1 - q, n - 1 - q)) q++;
    if (p < 1 || !phraseContext(u, p, q) || !tplPhrase(u, p, m - q) || !linePhrase(p, n - q)) continue;
    sibT.push(u);
    sibP.push(p);
    sibQ.push(q);
  }
  if (sibT.length < enumMax) return null;
  let p = n;
  let q = n;
  for (let k = 0; k < sibT.length; k++) {
    if (unchecked(sibP[k]) < p) p = unchecked(sibP[k]);
    if (unchecked(sibQ[k]) < q) q = unchecked(sibQ[k]);
  }
  if (!linePhrase(p, n - q)) return null;
  let sv: Tpl | null = null;
  let members = 0;
  for (let k = 0; k < sibT.length; k++) {
    const u = unchecked(sibT[k]);
    if (!tplPhrase(u, p, u.ntok - q)) continue;
    members++;
    if (sv === null || u.id < sv.id) sv = u;
  }
  if (sv === null || members < enumMax || mergeBudget < members) return null;
  const v: Tpl = sv;
  for (let k = 0; k < sibT.length; k++) {
    const u = unchecked(sibT[k]);
    if (u === v || !tplPhrase(u, p, u.ntok - q)) continue;
    mergeBudget--;
    retire(s, u, true, v.id);
  }
  // the shared tokens around one <*>, into gbuf
  const m = v.ntok;
  const need = v.pat.length + 8;
  if (gbuf.length < need) gbuf = new StaticArray<u8>(need * 2);
  const gb = changetype<usize>(gbuf);
  const vp = changetype<usize>(v.pat);
  let o = 0;
  let nn = 0;
  for (let i = 0; i < m; i++) {
    if (i == p) {
      unchecked(gS[nn] = o);
      unchecked(gL[nn++] = 3);
      store<u8>(gb + <usize>o, 60);
      store<u8>(gb + <usize>o + 1, 42);
      store<u8>(gb + <usize>o + 2, 62);
      o += 3;
    }
    if (i >= p && i < m - q) continue;
    const l = unchecked(v.tl[i]);
    memory.copy(gb + <usize>o, vp + <usize>unchecked(v.ts[i]), <usize>l);
    unchecked(gS[nn] = o);
    unchecked(gL[nn++] = l);
    o += l;
  }
  const sk = relength(s, v, nn);
  absorb(s, v);
  // reference.ts: templates of other lengths under the head that its run now covers merge into it
  for (let k = hl.length - 1; k >= 0 && mergeBudget > 0; k--) {
    const u = unchecked(hl[k]);
    if (u === v || u.ntok == v.ntok || !runCoversTpl(v, u)) continue;
    mergeBudget--;
    retire(s, u, true, v.id);
  }
  reskeleton(s, v, sk);
  return v;
}

function firstNonWs(p: usize, n: i32): i32 {
  for (let i = 0; i < n; i++) {
    const c = ch(p, i);
    if (!isWs(c)) return c;
  }
  return -1;
}

const changedSet = new Set<u64>();

// One function: the per-line loop over the batch keeps the tree walk's state in locals (calls per line cost in WASM).
export function mine(svc: i32, n: i32): void {
  nChanged = 0;
  nEvicted = 0;
  mergeBudget = n + LEAF_MAX;
  pending.clear();
  changedSet.clear();
  const s = service(svc);
  const base = changetype<usize>(inBuf);
  const mb = changetype<usize>(mbuf);
  for (let li = 0; li < n; li++) {
    const bs = unchecked(inOffs[li]);
    const be = unchecked(inOffs[li + 1]);
    const p = base + <usize>bs;
    const len = be - bs;
    let flags: u8 = 0;
    curPc = 0;
    curBase = li * MAX_PARAMS;
    curBs = bs;
    curP = p;
    let tpl: Tpl;
    let newFrom: f64 = 0;
    if (firstNonWs(p, len) == 123 && jsonShape(p, len)) {
      flags |= FLAG_JSON;
      const key = hashBytes(changetype<usize>(sbuf), spos);
      if (s.shapes.has(key)) {
        tpl = s.shapes.get(key);
        touch(s, tpl);
      } else {
        tpl = makeJson(nextIdV, svc, key, changetype<usize>(sbuf), spos);
        nextIdV += 1;
        addTpl(s, tpl, true);
        flags |= FLAG_NEW;
      }
      for (let k = 0; k < jpc; k++) addParam(k, unchecked(jStarts[k]), unchecked(jEnds[k]));
    } else {
      tokenize(p, len);
      if (lTrunc) flags |= FLAG_TRUNCATED;
      const ntok = lN;
      const key = leafKey(ntok, mb, lMS, lML, lH, lKind);
      let best: Tpl | null = null;
      let bestEq: i64 = 0;
      let bestDen: i64 = 1;
      let bestWild: i32 = -1;
      if (s.leaves.has(key)) {
        const leaf = s.leaves.get(key);
        const nl = leaf.length;
        for (let j = 0; j < nl; j++) {
          const t = unchecked(leaf[j]);
          const th = t.th;
          const tk = t.kind;
          const pp = changetype<usize>(t.pat);
          let eq = 0;
          let wild = 0;
          for (let i = 0; i < ntok; i++) {
            const kind = unchecked(tk[i]);
            if (kind == 1) wild++;
            else if (unchecked(th[i]) == unchecked(lH[i])) eq++;
            else if (kind == 2 && globMatch(pp + <usize>unchecked(t.ts[i]), unchecked(t.tl[i]), mb + <usize>unchecked(lMS[i]), unchecked(lML[i]))) eq++;
            else if (sameKey(pp + <usize>unchecked(t.ts[i]), unchecked(t.eqAt[i]), mb + <usize>unchecked(lMS[i]), unchecked(lML[i]))) eq++;
            else if (unchecked(t.kv[i]) != 0 && unchecked(th[i - 1]) == unchecked(lH[i - 1])) eq++;
          }
          const den = ntok - wild;
          const e: i64 = den == 0 ? 1 : <i64>eq;
          const d: i64 = den == 0 ? 1 : <i64>den;
          const lhs = e * bestDen;
          const rhs = bestEq * d;
          if (best === null || lhs > rhs || (lhs == rhs && wild > bestWild)) {
            best = t;
            bestEq = e;
            bestDen = d;
            bestWild = wild;
          }
        }
      }
      let splitFrom: f64 = 0;
      let found: Tpl | null = null;
      let byLoose = false;
      if (best !== null && (bestEq * SIM_DEN >= simNum * bestDen || (bestDen - bestEq <= 1 && bestEq >= 2))) {
        let bt: Tpl = best;
        // reference.ts: words in both at one to ENUM_POSITIONS differing positions are enum-like
        // constants, unless a template holding the line's words there takes the line
        diffsOf(s, bt, ntok);
        let hasFamily = false;
        if (dWords >= 1 && dWords <= ENUM_POSITIONS) {
          enumN = dWords;
          for (let k = 0; k < dWords; k++) unchecked(enumPos[k] = unchecked(dPos[k]));
          family(s.leaves.get(key), bt);
          hasFamily = true;
          if (fewWords()) {
            const alt = sameWord(s, s.leaves.get(key), bt, ntok);
            if (alt !== null) {
              bt = alt;
              diffsOf(s, bt, ntok);
              hasFamily = false;
            } else splitFrom = bt.id;
          }
        }
        const bp = changetype<usize>(bt.pat);
        const nd = dN;
        if (splitFrom != 0 || nd > 0) {
          // reference.ts: a template of the leading token that takes the line as it is, with more of its constants in place
          const lo = looseIn(s, headOf(key, ntok), ntok, lineVarCount(ntok));
          if (lo !== null) {
            simOf(bt, ntok);
            if (<i64>looseAnchors > sEq) {
              found = lo;
              splitFrom = 0;
              byLoose = true;
            }
          }
        }
        if (splitFrom == 0 && !byLoose) {
          found = bt;
          if (nd > 0) {
            // reference.ts: a value that is no word where bt holds one makes the position a variable: bt's family merges
            if (!hasFamily && dTplN >= 1 && dTplN <= ENUM_POSITIONS) {
              enumN = dTplN;
              for (let k = 0; k < dTplN; k++) unchecked(enumPos[k] = unchecked(dTplPos[k]));
              family(s.leaves.get(key), bt);
              hasFamily = true;
            }
            const need = bt.pat.length + 3 * ntok + 16;
            if (gbuf.length < need) gbuf = new StaticArray<u8>(need * 2);
            const gb = changetype<usize>(gbuf);
            let o = 0;
            for (let i = 0; i < ntok; i++) {
              const kind = unchecked(bt.kind[i]);
              const ta = bp + <usize>unchecked(bt.ts[i]);
              const tlen = unchecked(bt.tl[i]);
              let keep = kind == 1 || unchecked(bt.th[i]) == unchecked(lH[i]);
              if (!keep && kind == 2 && globMatch(ta, tlen, mb + <usize>unchecked(lMS[i]), unchecked(lML[i]))) keep = true;
              unchecked(gS[i] = o);
              if (keep) {
                memory.copy(gb + <usize>o, ta, <usize>tlen);
                unchecked(gL[i] = tlen);
                o += tlen;
              } else {
                const gl = generalize(ta, tlen, mb + <usize>unchecked(lMS[i]), unchecked(lML[i]), o);
                unchecked(gL[i] = gl);
                o += gl;
              }
            }
            const nt = makeText(bt.id, svc, ntok, gb, gS, gL);
            // swap the new token data into the existing template object (keeps leaf/LRU links)
            countFields(s, bt, -1);
            bt.pat = nt.pat;
            bt.ts = nt.ts;
            bt.tl = nt.tl;
            bt.th = nt.th;
            bt.kind = nt.kind;
            bt.kv = nt.kv;
            bt.eqAt = nt.eqAt;
            countFields(s, bt, 1);
            flags |= FLAG_CHANGED;
            if (hasFamily) {
              for (let k = fam.length - 1; k >= 0 && mergeBudget > 0; k--) {
                const u = unchecked(fam[k]);
                if (u === bt) continue;
                mergeBudget--;
                retire(s, u, true, bt.id);
              }
            }
            absorb(s, bt);
            reskeleton(s, bt, nt.skel);
            looseMerge(s, bt);
          }
          touch(s, bt);
        }
      }
      let byLength = false;
      if (found === null) {
        // no template of this length fits: one of another length with the same skeleton is the same event
        const sk = skelHash(ntok, mb, lMS, lML, lH, lKind);
        if (sk != 0 && s.skels.has(sk)) {
          const u = s.skels.get(sk);
          if (u.ntok != ntok) {
            found = u;
            byLength = true;
            touch(s, u);
            skeletonParams(u);
          }
        }
      }
      let byRun = false;
      if (found === null && splitFrom == 0) {
        // reference.ts: a template of another length whose <*> runs take the line, else a phrase family
        const head = headOf(key, ntok);
        if (head != 0 && s.heads.has(head)) {
          const hl = s.heads.get(head);
          let bestC = -1;
          for (let k = 0; k < hl.length; k++) {
            const u = unchecked(hl[k]);
            if (u.ntok == ntok || !runCovers(u, ntok)) continue;
            const c = constantsOf(u);
            if (c > bestC || (c == bestC && u.id < changetype<Tpl>(found).id)) {
              found = u;
              bestC = c;
            }
          }
          if (found === null) {
            // reference.ts: a template of any length that differs from the line by an optional part inside a variable
            found = looseIn(s, head, ntok, lineVarCount(ntok));
            byLoose = found !== null;
          } else {
            const f: Tpl = found;
            byRun = true;
            touch(s, f);
            runCovers(f, ntok);
            runParams(f);
          }
          if (found === null) {
            found = phrase(s, hl, ntok);
            if (found !== null) {
              const f: Tpl = found;
              flags |= FLAG_CHANGED;
              byRun = true;
              touch(s, f);
              runCovers(f, ntok);
              runParams(f);
            }
          }
        }
      }
      if (found === null) {
        const nt = makeText(nextIdV, svc, ntok, mb, lMS, lML);
        nextIdV += 1;
        addTpl(s, nt, true);
        flags |= FLAG_NEW;
        newFrom = splitFrom;
        found = nt;
      }
      tpl = found;
      if (byLoose) {
        byRun = true;
        touch(s, tpl);
        const last = lTrunc ? ntok - 1 : ntok;
        for (let j = 0; j < last; j++) if (unchecked(rAt[j]) >= 0) tokenParam(tpl, 0, 1, j, unchecked(rAt[j]));
      }
      if (!byLength && !byRun) {
        const last = lTrunc ? ntok - 1 : ntok;
        const tp = changetype<usize>(tpl.pat);
        for (let i = 0; i < last && curPc < MAX_PARAMS; i++) {
          const kind = unchecked(tpl.kind[i]);
          if (kind == 0) continue;
          const off = unchecked(lRawS[i]);
          const rl = unchecked(lRawL[i]);
          const vs = unchecked(lVS[i]);
          if (vs >= 0) addParam(i, off + vs, off + unchecked(lVE[i]));
          else if (kind == 1) addParam(i, off, off + rl);
          else {
            const ta = tp + <usize>unchecked(tpl.ts[i]);
            const tlen = unchecked(tpl.tl[i]);
            const lp = literalPrefix(ta, tlen);
            const ls = literalSuffix(ta, tlen);
            if (lp + ls < rl) addParam(i, off + lp, off + rl - ls);
            else addParam(i, off, off + rl);
          }
        }
      }
    }
    unchecked(oIds[li] = tpl.id);
    unchecked(oFlags[li] = flags);
    unchecked(oSplit[li] = newFrom);
    unchecked(oPc[li] = <u8>curPc);
    if ((flags & (FLAG_NEW | FLAG_CHANGED)) != 0) {
      const k = <u64>tpl.id;
      if (!changedSet.has(k)) {
        changedSet.add(k);
        unchecked(oChanged[nChanged++] = tpl.id);
      }
    }
  }
}

/** Copies the pattern of template `id` (live, or evicted in the last batch) to patBuf; -1 if unknown. */
export function patternOf(id: f64): i32 {
  const k = <u64>id;
  let t: Tpl | null = null;
  if (byId.has(k)) t = byId.get(k);
  else if (pending.has(k)) t = pending.get(k);
  if (t === null) return -1;
  const len = t.pat.length;
  if (patBuf.length < len) patBuf = new StaticArray<u8>(len * 2);
  memory.copy(changetype<usize>(patBuf), changetype<usize>(t.pat), <usize>len);
  return len;
}

/** Re-creates template `id` of service `svc` from the pattern in inBuf[0, len). */
export function restore(svc: i32, id: f64, len: i32): void {
  const s = service(svc);
  if (byId.has(<u64>id)) return;
  const p = changetype<usize>(inBuf);
  let t: Tpl;
  if (len > 0 && ch(p, 0) == 123 && jsonShape(p, len) && spos == len && memory.compare(changetype<usize>(sbuf), p, <usize>len) == 0) {
    const key = hashBytes(p, len);
    if (s.shapes.has(key)) return;
    t = makeJson(id, svc, key, p, len);
  } else {
    let n = 0;
    let i = 0;
    while (i < len && n < MAX_TOKENS + 1) {
      while (i < len && isSep(ch(p, i))) i++;
      if (i >= len) break;
      const st = i;
      i = tokenEnd(p, st, len);
      unchecked(gS[n] = st);
      unchecked(gL[n] = i - st);
      n++;
    }
    t = makeText(id, svc, n, p, gS, gL);
  }
  addTpl(s, t, false);
  if (id >= nextIdV) nextIdV = id + 1;
}

export function isLive(id: f64): i32 {
  return byId.has(<u64>id) ? 1 : 0;
}
