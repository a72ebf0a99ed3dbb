// The plain TypeScript reference engine of the log template miner: the readable statement of the
// algorithm, written with strings and Maps for clarity, not speed. assembly/logminer.ts implements the
// same steps over raw memory with hashed tokens; both must produce identical output (ids, flags,
// parameter ranges, numeric values, patterns) for every input, which the conformance test checks.
//
// Text is handled as bytes throughout (a "binary string": one char per UTF-8 byte), so invalid UTF-8,
// binary data and the byte limits behave the same in both engines.
//
// Algorithm (Drain, He et al. 2017, with these changes). The engine mines text; body.ts first picks
// the message out of JSON, logfmt, klog, multi-line and SQL-statement bodies (shared by both engines).
//  1. Tokenise on whitespace/control bytes; look at MATCH_BYTES bytes and MAX_TOKENS tokens at most.
//     A double-quoted string with spaces at a value position is one token (quoteEnd), so a quoted
//     message or User-Agent of any length keeps the token count fixed; a quoted request line at a
//     token's start splits into its words (isRequestLine), so its method is a word.
//  2. Mask variables by what they are, wherever they stand (maskToken): URLs (scheme kept), absolute
//     paths, e-mail addresses, over-long tokens, IPv6 and MAC addresses and dates with a month name
//     (masked whole), host names (a dotted name before ':port' or ending in a known TLD: masked
//     whole), a quoted string with spaces when any word in it is a variable, and inside each token
//     every segment between delimiters (= : , ; @ / ( ) [ ] { } < > " ' | \ # ! ? &) that holds a
//     number-like part (a part starting with a digit: numbers, IPs, ports, timestamps, durations such
//     as 12ms, hex 0x.., versions), a hex run of 6 or more with a digit (hashes, UUIDs, short commit
//     ids) or a numbered name (web01); one leading alphabetic word
//     joined by '.' or '-' stays (node-<*>, core.<*>; but mesos-slave-13 → <*>), one joined by '_'
//     does not (blk_123 → <*>); trailing dots stay outside (port 8030. → <*>.). key=value keeps the
//     key, quotes stay; a path after '=', '(' or ':' is masked whole (shell=<*>, chdir(<*>)).
//  3. Route by (token count, first PREFIX_TOKENS tokens): a variable token routes as <*> and a
//     key=value token by its key, so the tree never keys on a variable.
//  4. In the leaf, pick the template with the highest similarity = equal positions / positions that
//     are not already wildcards (Drain counts wildcards in the denominator, so wildcard-heavy lines
//     never matched); a template token that is a partial wildcard such as `rhost=<*>` matches by glob;
//     key=value tokens with the same key, and the values of a run of `key: value` pairs whose key is
//     equal, count as equal (their values are variables). Ties go to the template with more
//     wildcards, then to the older one.
//  5. Accept when similarity ≥ SIM_NUM/SIM_DEN (0.7), or when exactly one position differs and at
//     least two agree (short messages with one variable word), else start a new template. On a match, each differing
//     position is generalised to its common prefix/suffix up to a delimiter plus `<*>`
//     (`user=root` + `user=guest` → `user=<*>`), else `<*>`. A template that generalised absorbs the
//     templates of its leaf with its constants whose variables it now covers (absorb): a merge,
//     reported so the store records it; the generalised template keeps its id.
//     Enum-like words: when one to ENUM_POSITIONS differing positions hold a plain word in both
//     (Started / Stopped; from queued to running / from running to done), they are constants: a
//     template of the leaf with the line's words there that accepts the line takes it (sameWord),
//     else the line starts its own template (reported as split from the match), as long as each of
//     those positions has held fewer than ENUM_MAX distinct words in the templates of the leaf that
//     differ from the match only there (family); a further word makes the positions variables: the
//     match generalises and that family merges into it.
//  5b. Variable length: a line no template of its length accepts joins the template with the same
//     skeleton (constants in order, each run of variable tokens one mark: skeletonOf), whatever its
//     length. When a template's skeleton changes as it generalises and a template of another length
//     holds the new one, that one merges into it (reskeleton).
//  5c. Still none: a template of another length under the same leading token whose `<*>` runs take
//     the line's tokens, whatever they are (runCovers); else, when ENUM_MAX templates there share
//     the line's leading and trailing tokens and differ from it in a run of plain words, the phrase
//     is a variable: the oldest becomes those tokens around one `<*>` and the others merge (phrase).
//  6. A JSON object body without a message field is templated on its keys and shape:
//     `{"a":<*>,"b":{"c":<*>},"d":[<*>]}`, matched exactly.
//  7. Bounded state: a leaf holds at most LEAF_MAX templates (bounding the comparisons per line) and
//     a service at most maxTemplatesPerService; beyond either, the least recently used template (of
//     the leaf, else of the service) is evicted. Ids come from one counter and are never reused.
import {
  FLAG_CHANGED, FLAG_JSON, FLAG_NEW, FLAG_TRUNCATED, JSON_MAX_BYTES, JSON_MAX_DEPTH, JSON_MAX_KEYS, LONG_TOKEN,
  ENUM_MAX, ENUM_POSITIONS, LEAF_MAX, MATCH_BYTES, MAX_PARAMS, MAX_TOKENS, PREFIX_TOKENS, QUOTE_MAX, SIM_DEN, SIM_NUM,
  type CoreConfig, type CoreInput, type CoreOutput, type MinerCore,
} from './core.js';

export const WILDCARD = '<*>';

// ---- character classes (ASCII bytes) ----------------------------------------------------------------

const isSep = (c: number): boolean => c <= 0x20 || c === 0x7f;
const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isAlpha = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isHex = (c: number): boolean => isDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
/** Splits a token into segments: the masking unit. */
export function isDelim(c: number): boolean {
  switch (c) {
    case 61: case 58: case 44: case 59: case 64: case 47: case 40: case 41: case 91: case 93: // = : , ; @ / ( ) [ ]
    case 123: case 125: case 60: case 62: case 34: case 39: case 124: case 92: case 35: // { } < > " ' | \ #
    case 33: case 63: case 38: // ! ? &
      return true;
  }
  return false;
}
/** Where a generalised token may be cut (delimiters minus < > so `<*>` is never split). */
export function isGenDelim(c: number): boolean {
  return c !== 60 && c !== 62 && isDelim(c);
}
/** Splits a segment into parts: a variable segment keeps its leading alphabetic parts joined by . or - */
const isSubSep = (c: number): boolean => c === 46 || c === 45 || c === 95 || c === 43; // . - _ +
const isOpen = (c: number): boolean => c === 40 || c === 91 || c === 123 || c === 60 || c === 34 || c === 39;
const isClose = (c: number): boolean =>
  c === 41 || c === 93 || c === 125 || c === 62 || c === 34 || c === 39 || c === 44 || c === 59 || c === 58 ||
  c === 46 || c === 33 || c === 63;
const isPathLead = (c: number): boolean => c === 61 || c === 40 || c === 58; // = ( :
const isPathEnd = (c: number): boolean =>
  c === 44 || c === 59 || c === 41 || c === 93 || c === 125 || c === 34 || c === 39 || c === 38 || c === 124; // , ; ) ] } " ' & |
const isSchemeChar = (c: number): boolean => isAlpha(c) || isDigit(c) || c === 43 || c === 45 || c === 46;
const isEmailLocal = (c: number): boolean =>
  isAlpha(c) || isDigit(c) || c === 46 || c === 95 || c === 37 || c === 43 || c === 45;

// ---- masking -----------------------------------------------------------------------------------------

export interface Masked {
  /** the masked token (binary string) */
  text: string;
  /** byte range of the variable part inside the raw token, or -1 */
  varStart: number;
  varEnd: number;
}

/**
 * Is [s, e) two or more letters and then two or more digits (web01, worker17: hosts and ids; sha256
 * goes too, but not p99, jk2 or x509)?
 */
function isNumberedName(t: string, s: number, e: number): boolean {
  let d = e;
  while (d > s && isDigit(t.charCodeAt(d - 1))) d--;
  if (e - d < 2 || d - s < 2) return false;
  for (let i = s; i < d; i++) if (!isAlpha(t.charCodeAt(i))) return false;
  return true;
}

/** Is the part [s, e) of t number-like (starts with a digit), a numbered name or a hex run of 6+ with a digit (abc1234)? */
function isVarPart(t: string, s: number, e: number): boolean {
  if (e <= s) return false;
  if (isDigit(t.charCodeAt(s))) return true;
  if (isNumberedName(t, s, e)) return true;
  if (e - s < 6) return false;
  let digit = false;
  for (let i = s; i < e; i++) {
    const c = t.charCodeAt(i);
    if (!isHex(c)) return false;
    if (isDigit(c)) digit = true;
  }
  return digit;
}

/** Masks the segment [s, e) of t: returns the kept prefix length, or -1 when the segment is constant. */
function maskSegment(t: string, s: number, e: number): number {
  let variable = false;
  let keep = 0;
  let part = 0;
  let p = s;
  while (p <= e) {
    let q = p;
    while (q < e && !isSubSep(t.charCodeAt(q))) q++;
    if (isVarPart(t, p, q)) variable = true;
    if (part < 2) {
      let alpha = q > p;
      for (let i = p; i < q && alpha; i++) if (!isAlpha(t.charCodeAt(i))) alpha = false;
      const sep = q < e ? t.charCodeAt(q) : 0;
      // keep one leading word (node-<*>, core.<*>); two words make a name (mesos-slave-13 → <*>)
      if (part === 0) keep = alpha && (sep === 46 || sep === 45) ? q + 1 - s : 0;
      else if (alpha && keep > 0) keep = 0;
      part = keep > 0 ? part + 1 : 2;
    }
    p = q + 1;
  }
  return variable ? keep : -1;
}

/** Is [s, e) a dotted host name followed by ':' and a port (proxy.example.com:5070)? */
function isHostPort(t: string, s: number, e: number, tail: number): boolean {
  if (e + 1 >= tail || t.charCodeAt(e) !== 58 || !isDigit(t.charCodeAt(e + 1))) return false;
  let j = e + 1;
  while (j < tail && isDigit(t.charCodeAt(j))) j++;
  if (j < tail && !isDelim(t.charCodeAt(j))) return false;
  let dot = false;
  for (let i = s; i < e; i++) {
    const c = t.charCodeAt(i);
    if (c === 46) {
      if (i === s || i === e - 1) return false;
      dot = true;
    } else if (!isAlpha(c) && !isDigit(c) && c !== 45) return false;
  }
  return dot;
}

/**
 * A double-quoted string opening at q (a value position: a token's start, or after '=' or ':') that
 * holds a separator is one token, so a quoted message or User-Agent of any length keeps the token
 * count fixed. Returns the index of its closing quote: the first unescaped '"' before a separator,
 * the end or one of , ; ) ] }, within QUOTE_MAX bytes and before a line break; else -1 (then the
 * quote is an ordinary byte).
 */
export function quoteEnd(t: string, q: number, end: number): number {
  const lim = q + QUOTE_MAX < end ? q + QUOTE_MAX : end;
  let sep = false;
  for (let j = q + 1; j < lim; j++) {
    const c = t.charCodeAt(j);
    if (c === 10 || c === 13) return -1;
    if (isSep(c)) sep = true;
    else if (c === 34 && t.charCodeAt(j - 1) !== 92) {
      const n = j + 1 < end ? t.charCodeAt(j + 1) : 32;
      if (isSep(n) || n === 44 || n === 59 || n === 41 || n === 93 || n === 125) return sep ? j : -1;
    }
  }
  return -1;
}

const isUpper = (c: number): boolean => c >= 65 && c <= 90;
const isWild = (t: string, i: number, e: number): boolean =>
  i + 3 <= e && t.charCodeAt(i) === 60 && t.charCodeAt(i + 1) === 42 && t.charCodeAt(i + 2) === 62;

/**
 * Is the quoted text [s, e) an HTTP-style request line: `METHOD target` or `METHOD target PROTO/version`,
 * words apart by single spaces, the method 3 to 10 capitals, the target a path, `*`, a URL or `<*>`, the
 * protocol capitals then '/' (`GET /x HTTP/1.1`)? Such a string is not one token: it splits into its
 * words, so the method and protocol stay words (GET and POST are different events) while the target is
 * masked as any path. A stored pattern (`"GET <*> HTTP/<*>"`, `"<*> <*> HTTP/<*>"`) splits the same way.
 */
export function isRequestLine(t: string, s: number, e: number): boolean {
  // method
  let i = s;
  if (isWild(t, i, e)) i += 3;
  else {
    while (i < e && isUpper(t.charCodeAt(i))) i++;
    if (i - s < 3 || i - s > 10) return false;
  }
  if (i >= e || t.charCodeAt(i) !== 32) return false;
  // target
  const ts = ++i;
  while (i < e && t.charCodeAt(i) !== 32) i++;
  if (i === ts) return false;
  const c0 = t.charCodeAt(ts);
  if (!(c0 === 47 || c0 === 42 || isWild(t, ts, i) || (isAlpha(c0) && t.slice(ts, i).includes('://')))) return false;
  for (let k = ts; k < i; k++) if (isSep(t.charCodeAt(k))) return false;
  if (i === e) return true;
  // protocol (as a stored pattern may hold it: `<*>/<*>` once two protocols were seen)
  const ps = ++i;
  if (isWild(t, i, e)) i += 3;
  else while (i < e && isUpper(t.charCodeAt(i))) i++;
  if (i === ps || i >= e || t.charCodeAt(i) !== 47 || i + 1 >= e) return false;
  for (let k = i + 1; k < e; k++) if (isSep(t.charCodeAt(k))) return false;
  return true;
}

/** End of the token starting at s (a non-separator): the first separator outside a quoted string. */
export function tokenEnd(t: string, s: number, end: number): number {
  let i = s;
  tokQs = -1; // one quoted string per token
  tokQe = -1;
  while (i < end) {
    const c = t.charCodeAt(i);
    if (isSep(c)) break;
    if (c === 34 && tokQs < 0 && (i === s || t.charCodeAt(i - 1) === 61 || t.charCodeAt(i - 1) === 58)) {
      const j = quoteEnd(t, i, end);
      if (j > 0 && !(i === s && isRequestLine(t, i + 1, j))) {
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
/** The quotes of the quoted string in the token tokenEnd() last scanned, relative to its start, or -1. */
let tokQs = -1;
let tokQe = -1;

/** The tokens of a stored pattern, split as tokenizeLine splits a body. */
export function splitPattern(p: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < p.length) {
    while (i < p.length && isSep(p.charCodeAt(i))) i++;
    if (i >= p.length) break;
    const e = tokenEnd(p, i, p.length);
    out.push(p.slice(i, e));
    i = e;
  }
  return out;
}

const MONTHS = new Set(['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']);
/** Is [k, k + 3) a month abbreviation (any case) not followed by a letter? */
function isMonth(t: string, k: number, e: number): boolean {
  if (k + 3 > e || (k + 3 < e && isAlpha(t.charCodeAt(k + 3)))) return false;
  for (let i = k; i < k + 3; i++) if (!isAlpha(t.charCodeAt(i))) return false;
  return MONTHS.has(t.slice(k, k + 3).toLowerCase());
}

/**
 * End of an address or a date that starts at s and is masked whole, else -1: IPv6 (2001:db8::1,
 * [::1]:8080 → [<*>]:<*>), a MAC address, a date with a month name (10/Oct/2000:13:55:36). Their
 * pieces would otherwise mask one by one and keep the letters (db8, Oct) as constants.
 */
function wholeRunEnd(t: string, s: number, e: number): number {
  let k = s;
  let colons = 0;
  let dbl = false;
  let digit = false;
  let group = 0;
  let maxGroup = 0;
  let two = true; // every group exactly 2 hex digits (MAC)
  while (k < e) {
    const c = t.charCodeAt(k);
    if (c === 58) {
      if (k > s && t.charCodeAt(k - 1) === 58) dbl = true;
      if (group !== 2) two = false;
      colons++;
      group = 0;
    } else if (isHex(c)) {
      if (isDigit(c)) digit = true;
      group++;
      if (group > maxGroup) maxGroup = group;
    } else break;
    k++;
  }
  if (group !== 2) two = false;
  const endsClean = k === e || !(isAlpha(t.charCodeAt(k)) || isDigit(t.charCodeAt(k)) || t.charCodeAt(k) === 46);
  if (digit && maxGroup <= 4 && endsClean && ((colons >= 2 && (dbl || colons === 7)) || (colons === 5 && two))) return k;
  // a date with a month name: digits and - / : . + around exactly one month abbreviation
  if (!isDigit(t.charCodeAt(s))) return -1;
  let month = false;
  let seps = 0;
  k = s;
  while (k < e) {
    const c = t.charCodeAt(k);
    if (isDigit(c)) k++;
    else if (c === 45 || c === 47 || c === 58 || c === 46 || c === 43) {
      seps++;
      k++;
    } else if (!month && isMonth(t, k, e)) {
      month = true;
      k += 3;
    } else break;
  }
  return month && seps >= 2 && (k === e || !isAlpha(t.charCodeAt(k))) ? k : -1;
}

/** Does any word of the quoted text [s, e) hold a variable part? */
function quotedVariable(t: string, s: number, e: number): boolean {
  let i = s;
  while (i < e) {
    while (i < e && isSep(t.charCodeAt(i))) i++;
    let j = i;
    while (j < e && !isSep(t.charCodeAt(j))) j++;
    if (j > i && maskToken(t.slice(i, j)).varStart >= 0) return true;
    i = j;
  }
  return false;
}

/**
 * Lower-case top-level domains that make a dotted name a host (example.com) rather than code
 * (org.foo.Bar, chrome.exe). At most 8 letters each (the WASM twin packs one into a u64).
 */
export const TLDS = new Set([
  'com', 'net', 'org', 'edu', 'gov', 'mil', 'int', 'io', 'co', 'info', 'biz', 'us', 'uk', 'de', 'fr', 'jp',
  'cn', 'hk', 'ru', 'nl', 'eu', 'au', 'ca', 'br', 'local', 'internal', 'lan', 'cloud', 'dev', 'app', 'ai',
]);

/** Is [s, e) a domain name: labels of letters, digits and '-' joined by dots, ending in a known TLD? */
function isDomain(t: string, s: number, e: number): boolean {
  let last = -1;
  for (let i = s; i < e; i++) {
    const c = t.charCodeAt(i);
    if (c === 46) {
      if (i === s || i === last + 1) return false;
      last = i;
    } else if (!isAlpha(c) && !isDigit(c) && c !== 45) return false;
  }
  return last > s && last < e - 1 && TLDS.has(t.slice(last + 1, e));
}

/** Masks the variable parts of one raw token; [qs, qe] are the quotes of a quoted string in it that holds separators. */
export function maskToken(t: string, qs = -1, qe = -1): Masked {
  const L = t.length;
  if (qs >= 0) {
    // a quoted string with separators: variable as a whole when long or when any word in it is
    if (qe - qs - 1 > LONG_TOKEN || quotedVariable(t, qs + 1, qe)) {
      return { text: t.slice(0, qs + 1) + WILDCARD + t.slice(qe), varStart: qs + 1, varEnd: qe };
    }
    return { text: t, varStart: -1, varEnd: -1 };
  }
  if (L > LONG_TOKEN) return { text: WILDCARD, varStart: 0, varEnd: L };
  let a = 0;
  while (a < L && isOpen(t.charCodeAt(a))) a++;
  let b = L;
  while (b > a && isClose(t.charCodeAt(b - 1))) b--;
  if (a < b) {
    // URL: scheme "://" rest — the rest is masked when it holds a digit
    const u = t.indexOf('://', a);
    if (u > a && u + 3 <= b) {
      let s = u;
      while (s > a && isSchemeChar(t.charCodeAt(s - 1))) s--;
      if (s < u && isAlpha(t.charCodeAt(s))) {
        let digit = false;
        for (let i = u + 3; i < b; i++) if (isDigit(t.charCodeAt(i))) { digit = true; break; }
        if (!digit) return { text: t, varStart: -1, varEnd: -1 };
        return { text: t.slice(0, u + 3) + WILDCARD + t.slice(b), varStart: u + 3, varEnd: b };
      }
    }
    // absolute or relative path: /x, ./x, ../x, ~/x, C:\x
    const c0 = t.charCodeAt(a);
    if (
      (c0 === 47 && b - a >= 2) ||
      (isAlpha(c0) && b - a >= 4 && t.charCodeAt(a + 1) === 58 && t.charCodeAt(a + 2) === 92) ||
      (c0 === 126 && b - a >= 3 && t.charCodeAt(a + 1) === 47) ||
      (c0 === 46 && b - a >= 3 && t.charCodeAt(a + 1) === 47) ||
      (c0 === 46 && b - a >= 4 && t.charCodeAt(a + 1) === 46 && t.charCodeAt(a + 2) === 47)
    ) {
      return { text: t.slice(0, a) + WILDCARD + t.slice(b), varStart: a, varEnd: b };
    }
    // e-mail: local@domain.tld
    const at = t.indexOf('@', a);
    if (at > a && at < b) {
      let ok = true;
      for (let i = a; i < at && ok; i++) if (!isEmailLocal(t.charCodeAt(i))) ok = false;
      let dots = 0;
      let lastDot = -1;
      for (let i = at + 1; i < b && ok; i++) {
        const c = t.charCodeAt(i);
        if (c === 46) {
          if (i === lastDot + 1 || i === at + 1) ok = false;
          dots++;
          lastDot = i;
        } else if (!isAlpha(c) && !isDigit(c) && c !== 45) ok = false;
      }
      if (ok && dots > 0 && b - lastDot - 1 >= 2) {
        for (let i = lastDot + 1; i < b && ok; i++) if (!isAlpha(t.charCodeAt(i))) ok = false;
        if (ok) return { text: t.slice(0, a) + WILDCARD + t.slice(b), varStart: a, varEnd: b };
      }
    }
  }
  // segments between delimiters; trailing dots (end of a sentence) stay outside the last segment
  let out = '';
  let vs = -1;
  let ve = -1;
  let i = 0;
  let changed = false;
  let tail = L;
  while (tail > 0 && t.charCodeAt(tail - 1) === 46) tail--;
  const w = a < b ? wholeRunEnd(t, a, b) : -1;
  if (w > 0) {
    out = t.slice(0, a) + WILDCARD;
    vs = a;
    ve = w;
    changed = true;
    i = w;
  }
  while (i < tail) {
    const c = t.charCodeAt(i);
    if (isDelim(c)) {
      // a path as the value of key=/path, call(/path) or scheme:/path
      if (c === 47 && i > 0 && isPathLead(t.charCodeAt(i - 1)) && i + 1 < L && !isDelim(t.charCodeAt(i + 1))) {
        let j = i + 1;
        while (j < tail && !isPathEnd(t.charCodeAt(j))) j++;
        out += WILDCARD;
        if (vs < 0) vs = i;
        ve = j;
        changed = true;
        i = j;
        continue;
      }
      out += t[i];
      i++;
      continue;
    }
    let e = i;
    while (e < tail && !isDelim(t.charCodeAt(e))) e++;
    // a host name is masked whole (db-7.example.com, not db-<*>); else its variable parts
    const keep = isHostPort(t, i, e, tail) || isDomain(t, i, e) ? 0 : maskSegment(t, i, e);
    if (keep < 0) out += t.slice(i, e);
    else {
      out += t.slice(i, i + keep) + WILDCARD;
      if (vs < 0) vs = i + keep;
      ve = e;
      changed = true;
    }
    i = e;
  }
  out += t.slice(tail);
  return changed ? { text: out, varStart: vs, varEnd: ve } : { text: t, varStart: -1, varEnd: -1 };
}

/** 0: constant, 1: exactly `<*>`, 2: contains `<*>` */
export function tokenKind(t: string): number {
  if (t === WILDCARD) return 1;
  return t.includes(WILDCARD) ? 2 : 0;
}

/** A word: two or more letters and nothing else (Started, create; "GET): what an enum-like position holds. */
export function isWord(t: string): boolean {
  // the method of a quoted request line keeps its opening quote ("GET, "POST: isRequestLine)
  const s = t.length > 0 && t.charCodeAt(0) === 34 ? 1 : 0;
  if (t.length - s < 2) return false;
  for (let i = s; i < t.length; i++) if (!isAlpha(t.charCodeAt(i))) return false;
  return true;
}

/** Is a token part of a variable run: it holds `<*>` and is not key=value (whose key is a constant word)? */
function isRunToken(t: string, kind: number): boolean {
  return kind !== 0 && t.indexOf('=') < 0;
}

/**
 * The skeleton of a text template or line: its constant tokens in order, each maximal run of variable
 * tokens as one mark. Two with the same skeleton say the same thing and differ only in how many tokens
 * their variables took (`sent <*> bytes`, `sent <*> <*> bytes`). A key=value token counts by its key.
 * '' (not indexed) without a constant or without a variable.
 */
export function skeletonOf(tokens: string[], kinds: number[]): string {
  let k = '';
  let runs = 0;
  let consts = 0;
  let inRun = false;
  for (let i = 0; i < tokens.length; i++) {
    if (isRunToken(tokens[i]!, kinds[i]!)) {
      if (!inRun) {
        k += '\u0001';
        runs++;
        inRun = true;
      }
    } else {
      // key=value by its key alone: the value is a variable (sameKey)
      const t = tokens[i]!;
      const eq = t.indexOf('=');
      k += (eq > 0 && eq < t.length - 1 ? t.slice(0, eq + 1) : t) + '\u0000';
      consts++;
      inRun = false;
    }
  }
  return runs > 0 && consts > 0 ? k : '';
}

/** Does glob g (where `<*>` stands for any run of bytes, possibly empty) match all of s? */
export function globMatch(g: string, s: string): boolean {
  // classic iterative wildcard matching with one backtrack point
  let gi = 0;
  let si = 0;
  let starG = -1;
  let starS = 0;
  const gl = g.length;
  const sl = s.length;
  while (si < sl) {
    if (gi + 3 <= gl && g.charCodeAt(gi) === 60 && g.charCodeAt(gi + 1) === 42 && g.charCodeAt(gi + 2) === 62) {
      starG = gi;
      gi += 3;
      starS = si;
    } else if (gi < gl && g.charCodeAt(gi) === s.charCodeAt(si)) {
      gi++;
      si++;
    } else if (starG >= 0) {
      gi = starG + 3;
      starS++;
      si = starS;
    } else return false;
  }
  while (gi + 3 <= gl && g.charCodeAt(gi) === 60 && g.charCodeAt(gi + 1) === 42 && g.charCodeAt(gi + 2) === 62) gi += 3;
  return gi === gl;
}

/**
 * Are a and b key=value tokens with the same key (`user=app`, `user=report`)? Their values are
 * variables, so they count as equal in the similarity and generalise to `user=<*>` on a match.
 */
export function sameKey(a: string, b: string): boolean {
  const k = a.indexOf('=');
  return k > 0 && k < a.length - 1 && k < b.length - 1 && b.charCodeAt(k) === 61 && b.startsWith(a.slice(0, k));
}

/** A `key:` token: an identifier and a colon. */
function isKeyToken(t: string): boolean {
  const n = t.length;
  if (n < 2 || t.charCodeAt(n - 1) !== 58) return false;
  const c0 = t.charCodeAt(0);
  if (!isAlpha(c0) && c0 !== 95) return false;
  for (let i = 1; i < n - 1; i++) {
    const c = t.charCodeAt(i);
    if (!isAlpha(c) && !isDigit(c) && c !== 95 && c !== 46 && c !== 45) return false;
  }
  return true;
}

/**
 * Positions of a template that hold the value of a `key: value` pair in a run of at least two pairs
 * (`status: 200 host: a.example.com agent: curl`): a value there counts as equal when its key is,
 * like key=value (sameKey). A lone `Error: timeout` is not a run, so its words stay words.
 */
export function valuePositions(tokens: string[]): boolean[] {
  const key = tokens.map(isKeyToken);
  const n = tokens.length;
  return tokens.map((_, i) => i > 0 && key[i - 1]! && !key[i]! && (i + 1 < n ? key[i + 1]! : i >= 3 && key[i - 3]!));
}

/** Generalises template token a and line token b: common prefix / suffix cut at a delimiter, plus `<*>`. */
export function generalize(a: string, b: string): string {
  const la = a.length;
  const lb = b.length;
  const m = la < lb ? la : lb;
  let p = 0;
  while (p < m && a.charCodeAt(p) === b.charCodeAt(p)) p++;
  while (p > 0 && !isGenDelim(a.charCodeAt(p - 1))) p--;
  let s = 0;
  while (s < m - p && a.charCodeAt(la - 1 - s) === b.charCodeAt(lb - 1 - s)) s++;
  while (s > 0 && !isGenDelim(a.charCodeAt(la - s))) s--;
  return a.slice(0, p) + WILDCARD + a.slice(la - s);
}

/** Length of the literal text before the first / after the last `<*>` of a template token. */
function literalPrefix(t: string): number {
  const i = t.indexOf(WILDCARD);
  return i < 0 ? t.length : i;
}
function literalSuffix(t: string): number {
  const i = t.lastIndexOf(WILDCARD);
  return i < 0 ? t.length : t.length - i - 3;
}

/** Parses [s, e) of the bytes as a number optionally followed by a unit of ≤ 3 letters or %; NaN otherwise. */
export function parseNumber(t: string, s: number, e: number): number {
  let i = s;
  let neg = false;
  if (i < e && (t.charCodeAt(i) === 45 || t.charCodeAt(i) === 43)) {
    neg = t.charCodeAt(i) === 45;
    i++;
  }
  let v = 0;
  let digits = 0;
  while (i < e && isDigit(t.charCodeAt(i)) && digits < 18) {
    v = v * 10 + (t.charCodeAt(i) - 48);
    i++;
    digits++;
  }
  if (digits === 0 || (i < e && isDigit(t.charCodeAt(i)))) return NaN;
  if (i < e && t.charCodeAt(i) === 46) {
    i++;
    let f = 0;
    let scale = 1;
    let fd = 0;
    while (i < e && isDigit(t.charCodeAt(i))) {
      if (fd < 15) {
        f = f * 10 + (t.charCodeAt(i) - 48);
        scale *= 10;
        fd++;
      }
      i++;
    }
    v += f / scale;
  }
  const unit = e - i;
  if (unit === 1 && t.charCodeAt(i) === 37) return neg ? -v : v;
  if (unit > 3) return NaN;
  for (let k = i; k < e; k++) if (!isAlpha(t.charCodeAt(k))) return NaN;
  return neg ? -v : v;
}

// ---- JSON shape --------------------------------------------------------------------------------------

interface JsonShape {
  shape: string;
  /** raw value ranges in body coordinates, up to MAX_PARAMS */
  starts: number[];
  ends: number[];
}

const isWs = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 13;
const isScalarChar = (c: number): boolean => isAlpha(c) || isDigit(c) || c === 43 || c === 45 || c === 46;

/** Shape of a JSON object body, or null when it is not one (then it is mined as text). One pass over the text, as the WASM engine's. */
export function jsonShape(body: string): JsonShape | null {
  const n = body.length;
  if (n > JSON_MAX_BYTES) return null;
  let i = 0;
  let out = '';
  const starts: number[] = [];
  const ends: number[] = [];
  const param = (s: number, e: number): void => {
    if (starts.length < MAX_PARAMS) {
      starts.push(s);
      ends.push(e);
    }
  };
  const ws = (): void => {
    while (i < n && isWs(body.charCodeAt(i))) i++;
  };
  // skips a string starting at i (a quote); returns false when unterminated
  const skipString = (): boolean => {
    i++;
    while (i < n) {
      const c = body.charCodeAt(i);
      if (c === 92) i += 2;
      else if (c === 34) {
        i++;
        return true;
      } else i++;
    }
    return false;
  };
  // skips a balanced {...} or [...] starting at i
  const skipNested = (): boolean => {
    let depth = 0;
    while (i < n) {
      const c = body.charCodeAt(i);
      if (c === 34) {
        if (!skipString()) return false;
        continue;
      }
      if (c === 123 || c === 91) depth++;
      else if (c === 125 || c === 93) {
        depth--;
        if (depth === 0) {
          i++;
          return true;
        }
      }
      i++;
    }
    return false;
  };
  const value = (depth: number): boolean => {
    ws();
    if (i >= n) return false;
    const c = body.charCodeAt(i);
    if (c === 123) {
      if (depth >= JSON_MAX_DEPTH) {
        const s = i;
        if (!skipNested()) return false;
        param(s, i);
        out += WILDCARD;
        return true;
      }
      return object(depth + 1);
    }
    if (c === 91) {
      const s = i;
      if (!skipNested()) return false;
      param(s, i);
      out += '[' + WILDCARD + ']';
      return true;
    }
    if (c === 34) {
      const s = i + 1;
      if (!skipString()) return false;
      param(s, i - 1);
      out += WILDCARD;
      return true;
    }
    if (c === 60 && i + 2 < n && body.charCodeAt(i + 1) === 42 && body.charCodeAt(i + 2) === 62) {
      i += 3;
      out += WILDCARD;
      return true;
    }
    const s = i;
    while (i < n && isScalarChar(body.charCodeAt(i))) i++;
    if (i === s) return false;
    param(s, i);
    out += WILDCARD;
    return true;
  };
  const object = (depth: number): boolean => {
    // at '{'
    i++;
    out += '{';
    ws();
    if (i < n && body.charCodeAt(i) === 125) {
      i++;
      out += '}';
      return true;
    }
    for (let keys = 0; ; keys++) {
      if (keys >= JSON_MAX_KEYS) return false;
      ws();
      if (i >= n || body.charCodeAt(i) !== 34) return false;
      const ks = i;
      if (!skipString()) return false;
      out += body.slice(ks, i);
      ws();
      if (i >= n || body.charCodeAt(i) !== 58) return false;
      i++;
      out += ':';
      if (!value(depth)) return false;
      ws();
      if (i >= n) return false;
      const c = body.charCodeAt(i);
      i++;
      if (c === 44) {
        out += ',';
        continue;
      }
      if (c === 125) {
        out += '}';
        return true;
      }
      return false;
    }
  };
  ws();
  if (i >= n || body.charCodeAt(i) !== 123) return null;
  if (!object(1)) return null;
  ws();
  if (i !== n) return null;
  return { shape: out, starts, ends };
}

// ---- the engine --------------------------------------------------------------------------------------

interface RefTemplate {
  id: number;
  /** use tick: last line matched (or creation / restore) */
  used: number;
  svc: number;
  json: boolean;
  leafKey: string;
  tokens: string[];
  kinds: number[];
  /** positions holding the value of a `key: value` pair (valuePositions) */
  values: boolean[];
  pattern: string;
  /** skeletonOf(tokens), '' for JSON */
  skel: string;
}

interface RefService {
  leaves: Map<string, RefTemplate[]>;
  shapes: Map<string, RefTemplate>;
  /** live templates in least-recently-used-first order (Map iteration order) */
  lru: Map<number, RefTemplate>;
  /** skeleton → the template that holds it (the first one to) */
  skels: Map<string, RefTemplate>;
  /** leading-token key (headOf) → the text templates of any length under it, the LEAF_MAX latest added */
  heads: Map<string, RefTemplate[]>;
}

interface Line {
  tokens: string[];
  raw: string[];
  /** raw token start inside the body */
  offs: number[];
  varStart: number[];
  varEnd: number[];
  truncated: boolean;
}

/**
 * Is [s, e) `statement:` in any case? The rest of the line after it is one value: the SQL of a
 * PostgreSQL statement log (log_statement, log_min_duration_statement, STATEMENT:), of any length.
 */
function isStatement(t: string, s: number, e: number): boolean {
  return e - s === 10 && t.charCodeAt(e - 1) === 58 && t.slice(s, e - 1).toLowerCase() === 'statement';
}

/** Splits and masks one body (a binary string). */
export function tokenizeLine(body: string): Line {
  const realEnd = body.length;
  const end = realEnd < MATCH_BYTES ? realEnd : MATCH_BYTES;
  const line: Line = { tokens: [], raw: [], offs: [], varStart: [], varEnd: [], truncated: realEnd > MATCH_BYTES };
  let i = 0;
  let rest = false;
  while (i < end) {
    while (i < end && isSep(body.charCodeAt(i))) i++;
    if (i >= end) break;
    if (line.tokens.length === MAX_TOKENS) {
      line.truncated = true;
      break;
    }
    const s = i;
    let m: Masked;
    if (rest) {
      i = end;
      while (i > s && isSep(body.charCodeAt(i - 1))) i--;
      m = { text: WILDCARD, varStart: 0, varEnd: i - s };
      rest = false;
    } else {
      i = tokenEnd(body, s, end);
      m = maskToken(body.slice(s, i), tokQs, tokQe);
      rest = isStatement(body, s, i);
    }
    const raw = body.slice(s, i);
    line.tokens.push(m.text);
    line.raw.push(raw);
    line.offs.push(s);
    line.varStart.push(m.varStart);
    line.varEnd.push(m.varEnd);
  }
  if (line.truncated) {
    line.tokens.push(WILDCARD);
    line.raw.push('');
    line.offs.push(end);
    line.varStart.push(-1);
    line.varEnd.push(-1);
  }
  return line;
}

/**
 * Leaf of a line or template: its token count and leading tokens, a variable one or one with a digit
 * (an id the masking kept, jk2_init) as one wildcard and a key=value one by its key alone
 * (`user=bob logged in` and `user=eve logged in` share a leaf).
 */
function leafKeyOf(tokens: string[]): string {
  let k = String(tokens.length);
  for (let i = 0; i < PREFIX_TOKENS && i < tokens.length; i++) {
    const t = tokens[i]!;
    const eq = t.indexOf('=');
    k += '\u0000' + (tokenKind(t) !== 0 || /[0-9]/.test(t) ? '\u0001' : eq >= 0 && eq < t.length - 1 ? t.slice(0, eq + 1) : t);
  }
  return k;
}

/** The leading-token part of a leaf key (the key without the token count): where templates of any length that begin alike are listed. */
function headOf(leafKey: string): string {
  const i = leafKey.indexOf('\u0000');
  return i < 0 ? '' : leafKey.slice(i);
}

/** A plain word of a phrase: letters (an inner ' or - allowed), then at most one of . , ; : ! ? (reset, peer., can't). */
export function isPhraseWord(t: string): boolean {
  let n = t.length;
  if (n > 1 && (t.endsWith('.') || t.endsWith(',') || t.endsWith(';') || t.endsWith(':') || t.endsWith('!') || t.endsWith('?'))) n--;
  if (n === 0 || !isAlpha(t.charCodeAt(0)) || !isAlpha(t.charCodeAt(n - 1))) return false;
  for (let i = 1; i < n - 1; i++) {
    const c = t.charCodeAt(i);
    if (!isAlpha(c) && c !== 39 && c !== 45) return false;
  }
  return true;
}

/** Constant tokens of a template outside [a, b). */
function constantsAround(kinds: number[], a: number, b: number): number {
  let c = 0;
  for (let i = 0; i < kinds.length; i++) if ((i < a || i >= b) && kinds[i] === 0) c++;
  return c;
}

/**
 * Is the context of a phrase at [p, m - q) of a template with these kinds enough to call it one
 * event: two constant tokens around it, or a constant first token that is all there is before the
 * phrase ends the line (`Starting <phrase>`, `error: <phrase>`). `Job <*> <phrase>` (one constant
 * and a variable) is neither: such phrases (started, stopped by user) name events.
 */
function phraseContext(kinds: number[], p: number, q: number): boolean {
  const c = constantsAround(kinds, p, kinds.length - q);
  return c >= 2 || (c === 1 && p === 1 && q === 0);
}

/** Are tokens [a, b) one or more plain words of a phrase? */
function phraseRun(tokens: string[], a: number, b: number): boolean {
  if (a >= b) return false;
  for (let i = a; i < b; i++) if (!isPhraseWord(tokens[i]!)) return false;
  return true;
}

/** Does template token tt (kind k) take line token lt one for one: equal, a glob that matches, or key=value with the same key? */
function coversToken(tt: string, k: number, lt: string): boolean {
  return tt === lt || (k === 1) || (k === 2 && globMatch(tt, lt)) || sameKey(tt, lt);
}

/**
 * Does a template of another length cover the line when each run of `<*>` tokens may take one or more
 * of its tokens, whatever they are (`copied <*> <*> files to <*>` covers `copied 3 files to backup`,
 * `connect failed: <*>` covers `connect failed: no route to host`)? Every other template token takes
 * one line token (coversToken). On success `at[j]` is the template position of line token j and
 * `runEnd[j]` the end of the `<*>` run that took it (or -1). Classic glob matching with one backtrack
 * point, a run standing for "one token, then any more".
 */
function runCovers(tt: string[], tk: number[], lt: string[], at: number[], runEnd: number[]): boolean {
  const m = tt.length;
  const n = lt.length;
  let i = 0;
  let j = 0;
  let starI = -1; // template position after the last run
  let starS = -1; // that run's start
  let starJ = 0; // the line token its extension would take next
  while (j < n) {
    if (i < m && tk[i] === 1) {
      const rs = i;
      while (i < m && tk[i] === 1) i++;
      at[j] = rs;
      runEnd[j] = i;
      starI = i;
      starS = rs;
      starJ = ++j;
    } else if (i < m && coversToken(tt[i]!, tk[i]!, lt[j]!)) {
      at[j] = i;
      runEnd[j] = -1;
      i++;
      j++;
    } else if (starI >= 0) {
      // the last run takes one more token
      at[starJ] = starS;
      runEnd[starJ] = starI;
      j = ++starJ;
      i = starI;
    } else return false;
  }
  return i === m;
}

/** Number of template tokens that are not `<*>`: the more, the more specific a cover. */
function constantsOf(kinds: number[]): number {
  let c = 0;
  for (const k of kinds) if (k !== 1) c++;
  return c;
}

/**
 * Parameters of a line covered by a template through runCovers (at, runEnd): a token taken one for
 * one gives its variable part as the main path does; the tokens a `<*>` run took give one value per
 * run position, the run's last position the rest of them as one span (`no route to host`).
 */
function runParams(tt: string[], tk: number[], line: Line, at: number[], runEnd: number[], addParam: (slot: number, s: number, e: number) => void): void {
  const n = line.truncated ? line.tokens.length - 1 : line.tokens.length;
  let j = 0;
  while (j < n) {
    const i = at[j]!;
    if (runEnd[j]! < 0) {
      tokenParam(tt[i]!, tk[i]!, line, j, i, addParam);
      j++;
      continue;
    }
    // the tokens of one run (template positions i .. re - 1): one each, the last position the rest as one span
    const re = runEnd[j]!;
    let je = j;
    while (je < n && at[je] === i && runEnd[je] === re) je++;
    for (let k = j; k < je; k++) {
      if (i + (k - j) === re - 1 && je - k > 1) {
        addParam(re - 1, line.offs[k]!, line.offs[je - 1]! + line.raw[je - 1]!.length);
        break;
      }
      tokenParam(WILDCARD, 1, line, k, i + (k - j), addParam);
    }
    j = je;
  }
}

/** The parameter of line token j taken one for one by template token tt (kind k) at slot, as the main path reports it. */
function tokenParam(tt: string, k: number, line: Line, j: number, slot: number, addParam: (slot: number, s: number, e: number) => void): void {
  if (k === 0) return;
  const off = line.offs[j]!;
  const raw = line.raw[j]!;
  if (line.varStart[j]! >= 0) addParam(slot, off + line.varStart[j]!, off + line.varEnd[j]!);
  else if (k === 1) addParam(slot, off, off + raw.length);
  else {
    const lp = literalPrefix(tt);
    const ls = literalSuffix(tt);
    if (lp + ls < raw.length) addParam(slot, off + lp, off + raw.length - ls);
    else addParam(slot, off, off + raw.length);
  }
}

/**
 * Parameters of a line that joined a template of another length with the same skeleton: the two are
 * walked together, constant by constant and run by run; the j-th token of a variable run gets the slot
 * of the template run's j-th token (its last one beyond), so a slot keeps meaning one value.
 */
function skeletonParams(tt: string[], tk: number[], line: Line, addParam: (slot: number, s: number, e: number) => void): void {
  const lt = line.tokens;
  const n = lt.length;
  const last = line.truncated ? n - 1 : n;
  let ti = 0;
  let i = 0;
  while (i < last) {
    const kind = tokenKind(lt[i]!);
    if (!isRunToken(lt[i]!, kind)) {
      if (kind !== 0 && line.varStart[i]! >= 0) addParam(ti, line.offs[i]! + line.varStart[i]!, line.offs[i]! + line.varEnd[i]!);
      i++;
      ti++;
      continue;
    }
    let ie = i;
    while (ie < n && isRunToken(lt[ie]!, tokenKind(lt[ie]!))) ie++;
    let te = ti;
    while (te < tt.length && isRunToken(tt[te]!, tk[te]!)) te++;
    for (let j = i; j < ie && j < last; j++) {
      if (line.varStart[j]! < 0) continue;
      addParam(ti + Math.min(j - i, te - ti - 1), line.offs[j]! + line.varStart[j]!, line.offs[j]! + line.varEnd[j]!);
    }
    i = ie;
    ti = te;
  }
}

function latin1(bytes: Uint8Array, s: number, e: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + s, e - s).toString('latin1');
}

export class ReferenceCore implements MinerCore {
  readonly kind = 'reference' as const;
  private readonly cap: number;
  private readonly simNum: number;
  private services: RefService[] = [];
  private byId = new Map<number, RefTemplate>();
  private evictedPending = new Map<number, RefTemplate>();
  private mergeBudget = 0;
  private next = 1;
  /** runCovers' alignment of the current line */
  private readonly at: number[] = [];
  private readonly runEnd: number[] = [];
  private tick = 0;
  private input: CoreInput = { bytes: new Uint8Array(1024), offsets: new Int32Array(65) };
  private out: CoreOutput;

  constructor(config: CoreConfig) {
    this.cap = Math.max(1, config.maxTemplatesPerService | 0);
    this.simNum = config.similarityTenths ?? SIM_NUM;
    this.out = ReferenceCore.alloc(64);
  }

  private static alloc(n: number): CoreOutput {
    return {
      ids: new Float64Array(n),
      flags: new Uint8Array(n),
      paramCount: new Uint8Array(n),
      paramSlot: new Uint16Array(n * MAX_PARAMS),
      paramStart: new Int32Array(n * MAX_PARAMS),
      paramLen: new Int32Array(n * MAX_PARAMS),
      paramNum: new Float64Array(n * MAX_PARAMS),
      splitFrom: new Float64Array(n),
      changed: new Float64Array(n),
      changedCount: 0,
      evicted: new Float64Array(2 * n + LEAF_MAX),
      evictedInto: new Float64Array(2 * n + LEAF_MAX),
      evictedCount: 0,
    };
  }

  prepare(totalBytes: number, n: number): CoreInput {
    if (this.input.bytes.length < totalBytes) this.input.bytes = new Uint8Array(Math.max(totalBytes, this.input.bytes.length * 2));
    if (this.input.offsets.length < n + 1) this.input.offsets = new Int32Array(Math.max(n + 1, this.input.offsets.length * 2));
    if (this.out.ids.length < n) this.out = ReferenceCore.alloc(Math.max(n, this.out.ids.length * 2));
    return this.input;
  }

  private service(svc: number): RefService {
    let s = this.services[svc];
    if (!s) {
      s = { leaves: new Map(), shapes: new Map(), lru: new Map(), skels: new Map(), heads: new Map() };
      this.services[svc] = s;
    }
    return s;
  }

  nextId(): number {
    return this.next;
  }
  setNextId(id: number): void {
    if (id > this.next) this.next = id;
  }
  liveCount(svc: number): number {
    return this.services[svc]?.lru.size ?? 0;
  }

  patternBytes(id: number): Uint8Array | null {
    const t = this.byId.get(id) ?? this.evictedPending.get(id);
    return t ? Uint8Array.from(Buffer.from(t.pattern, 'latin1')) : null;
  }

  isLive(id: number): boolean {
    return this.byId.has(id);
  }

  private touch(s: RefService, t: RefTemplate): void {
    s.lru.delete(t.id);
    s.lru.set(t.id, t);
    t.used = ++this.tick;
  }

  /**
   * Adds a template. A full leaf (LEAF_MAX templates: bounds the work per line) loses its least
   * recently used template; otherwise a service at the cap loses its least recently used one.
   */
  private add(s: RefService, t: RefTemplate, out: CoreOutput | null): void {
    let victim: RefTemplate | undefined;
    const full = t.json ? undefined : s.leaves.get(t.leafKey);
    if (full && full.length >= LEAF_MAX) {
      victim = full[0]!;
      for (const c of full) if (c.used < victim.used) victim = c;
    } else if (s.lru.size >= this.cap) victim = s.lru.values().next().value as RefTemplate;
    if (victim) this.retire(s, victim, out, 0);
    s.lru.set(t.id, t);
    t.used = ++this.tick;
    this.byId.set(t.id, t);
    if (t.json) s.shapes.set(t.leafKey, t);
    else {
      let leaf = s.leaves.get(t.leafKey);
      if (!leaf) {
        leaf = [];
        s.leaves.set(t.leafKey, leaf);
      }
      leaf.push(t);
      if (t.skel !== '' && !s.skels.has(t.skel)) s.skels.set(t.skel, t);
      const h = headOf(t.leafKey);
      if (h !== '') {
        let hl = s.heads.get(h);
        if (!hl) {
          hl = [];
          s.heads.set(h, hl);
        }
        hl.push(t);
        if (hl.length > LEAF_MAX) hl.shift();
      }
    }
  }

  /** Removes a live template; it is reported as evicted, or as merged into template `into` (> 0). */
  private retire(s: RefService, victim: RefTemplate, out: CoreOutput | null, into: number): void {
    s.lru.delete(victim.id);
    this.byId.delete(victim.id);
    if (victim.json) s.shapes.delete(victim.leafKey);
    else {
      const leaf = s.leaves.get(victim.leafKey)!;
      leaf.splice(leaf.indexOf(victim), 1);
      if (leaf.length === 0) s.leaves.delete(victim.leafKey);
      if (victim.skel !== '' && s.skels.get(victim.skel) === victim) s.skels.delete(victim.skel);
      const hl = s.heads.get(headOf(victim.leafKey));
      const k = hl ? hl.indexOf(victim) : -1;
      if (k >= 0) {
        hl!.splice(k, 1);
        if (hl!.length === 0) s.heads.delete(headOf(victim.leafKey));
      }
    }
    this.evictedPending.set(victim.id, victim);
    if (out) {
      out.evictedInto[out.evictedCount] = into;
      out.evicted[out.evictedCount++] = victim.id;
    }
  }

  /**
   * After tpl generalised: another template of its leaf with the same constant tokens, whose
   * variables tpl's now cover (`"curl/<*>"` under `"<*>"`), is the same event split in two by the
   * order lines came in, so it merges into tpl: tpl keeps its id and the other is retired, reported
   * with `into`. A template that differs in a constant word stays (Transitioned from NEW to
   * UNASSIGNED is not Transitioned from <*> to <*>: merging those cost Hadoop 0.01 GA). At most
   * n + LEAF_MAX merges per batch (the size of the output arrays).
   */
  private absorb(s: RefService, tpl: RefTemplate, out: CoreOutput): void {
    const leaf = s.leaves.get(tpl.leafKey)!;
    for (let k = leaf.length - 1; k >= 0 && this.mergeBudget > 0; k--) {
      const u = leaf[k]!;
      if (u === tpl) continue;
      let covered = true;
      for (let i = 0; i < tpl.tokens.length && covered; i++) {
        const kind = tpl.kinds[i]!;
        covered = tpl.tokens[i] === u.tokens[i] || (u.kinds[i] !== 0 && (kind === 1 || (kind === 2 && globMatch(tpl.tokens[i]!, u.tokens[i]!))));
      }
      if (!covered) continue;
      this.mergeBudget--;
      this.retire(s, u, out, tpl.id);
    }
  }

  /**
   * The templates of tpl's leaf that differ from it only by the words at positions ps (tpl included):
   * the values enum-like positions have taken, one template per combination.
   */
  private family(leaf: RefTemplate[], tpl: RefTemplate, ps: number[]): RefTemplate[] {
    const out: RefTemplate[] = [];
    for (const u of leaf) {
      if (!ps.every((p) => isWord(u.tokens[p]!))) continue;
      let same = true;
      for (let i = 0; i < tpl.tokens.length && same; i++) if (!ps.includes(i) && u.tokens[i] !== tpl.tokens[i]) same = false;
      if (same) out.push(u);
    }
    return out;
  }

  /** Has every position of ps held fewer than ENUM_MAX distinct words in the family (an enum, still)? */
  private static fewWords(fam: RefTemplate[], ps: number[]): boolean {
    for (const p of ps) if (new Set(fam.map((u) => u.tokens[p]!)).size >= ENUM_MAX) return false;
    return true;
  }

  /**
   * A line no template takes, that shares its leading and trailing tokens with templates of its head
   * and differs from each in a run of plain words (`connect failed: connection reset by peer`, `...
   * no route to host`): those phrases are values of one variable once ENUM_MAX templates hold one
   * each (a few stay constants, as enum-like words do). Then the oldest of them becomes the shared
   * tokens around one `<*>` (keeping its id; it moves to the leaf of its new length), the others
   * merge into it, and it is returned; else undefined.
   */
  private phrase(s: RefService, hl: RefTemplate[], lt: string[], out: CoreOutput): RefTemplate | undefined {
    const n = lt.length;
    const sib: { u: RefTemplate; p: number; q: number }[] = [];
    for (const u of hl) {
      const m = u.tokens.length;
      const lim = (m < n ? m : n) - 1;
      let p = 0;
      while (p < lim && coversToken(u.tokens[p]!, u.kinds[p]!, lt[p]!)) p++;
      let q = 0;
      while (p + q < lim && coversToken(u.tokens[m - 1 - q]!, u.kinds[m - 1 - q]!, lt[n - 1 - q]!)) q++;
      if (p < 1 || !phraseContext(u.kinds, p, q) || !phraseRun(u.tokens, p, m - q) || !phraseRun(lt, p, n - q)) continue;
      sib.push({ u, p, q });
    }
    if (sib.length < ENUM_MAX) return undefined;
    let p = n;
    let q = n;
    for (const x of sib) {
      if (x.p < p) p = x.p;
      if (x.q < q) q = x.q;
    }
    if (!phraseRun(lt, p, n - q)) return undefined;
    let sv: RefTemplate | undefined;
    let members = 0;
    for (const { u } of sib) {
      if (!phraseRun(u.tokens, p, u.tokens.length - q)) continue;
      members++;
      if (sv === undefined || u.id < sv.id) sv = u;
    }
    if (sv === undefined || members < ENUM_MAX || this.mergeBudget < members) return undefined;
    for (const { u } of sib) {
      if (u === sv || !phraseRun(u.tokens, p, u.tokens.length - q)) continue;
      this.mergeBudget--;
      this.retire(s, u, out, sv.id);
    }
    const m = sv.tokens.length;
    this.relength(s, sv, [...sv.tokens.slice(0, p), WILDCARD, ...sv.tokens.slice(m - q)], out);
    this.absorb(s, sv, out);
    // templates of other lengths under the head that its run now covers (`failed: <*> is <*>`, two
    // phrases Drain joined before) are the same event. Only here: doing so whenever a template
    // generalises merged OpenSSH's `for invalid user <*>` into `for <*>` (GA 0.99 → 0.74).
    for (let k = hl.length - 1; k >= 0 && this.mergeBudget > 0; k--) {
      const u = hl[k]!;
      if (u === sv || u.tokens.length === sv.tokens.length || !runCovers(sv.tokens, sv.kinds, u.tokens, this.at, this.runEnd)) continue;
      this.mergeBudget--;
      this.retire(s, u, out, sv.id);
    }
    this.reskeleton(s, sv, out);
    return sv;
  }

  /** Gives template t other tokens of another length: it moves to that leaf (a full leaf loses its least recently used template). */
  private relength(s: RefService, t: RefTemplate, tokens: string[], out: CoreOutput): void {
    const old = s.leaves.get(t.leafKey)!;
    old.splice(old.indexOf(t), 1);
    if (old.length === 0) s.leaves.delete(t.leafKey);
    t.tokens = tokens;
    t.kinds = tokens.map(tokenKind);
    t.values = valuePositions(tokens);
    t.pattern = tokens.join(' ');
    t.leafKey = String(tokens.length) + headOf(t.leafKey);
    let leaf = s.leaves.get(t.leafKey);
    if (!leaf) {
      leaf = [];
      s.leaves.set(t.leafKey, leaf);
    }
    if (leaf.length >= LEAF_MAX && this.mergeBudget > 0) {
      let victim = leaf[0]!;
      for (const c of leaf) if (c.used < victim.used) victim = c;
      this.mergeBudget--;
      this.retire(s, victim, out, 0);
      leaf = s.leaves.get(t.leafKey) ?? [];
      s.leaves.set(t.leafKey, leaf);
    }
    leaf.push(t);
  }

  /** Similarity of template t to line tokens lt as the leaf search computes it: [equal, non-wildcard, wildcards]. */
  private similarity(t: RefTemplate, lt: string[]): [number, number, number] {
    let eq = 0;
    let wild = 0;
    for (let i = 0; i < lt.length; i++) {
      const tt = t.tokens[i]!;
      const kind = t.kinds[i]!;
      if (kind === 1) wild++;
      else if (tt === lt[i] || (kind === 2 && globMatch(tt, lt[i]!)) || sameKey(tt, lt[i]!) || (t.values[i] && t.tokens[i - 1] === lt[i - 1])) eq++;
    }
    const den = lt.length - wild;
    return den === 0 ? [1, 1, wild] : [eq, den, wild];
  }

  private accepts(eq: number, den: number): boolean {
    return eq * SIM_DEN >= this.simNum * den || (den - eq <= 1 && eq >= 2);
  }

  /**
   * The positions template t does not cover yet in line tokens lt: how many, those holding a word in
   * both (wordPos), and those where t holds a word whatever the line holds (tplWordPos).
   */
  private diffs(t: RefTemplate, lt: string[]): { n: number; words: number; wordPos: number[]; tplWordPos: number[] } {
    let n = 0;
    const wordPos: number[] = [];
    const tplWordPos: number[] = [];
    for (let i = 0; i < lt.length; i++) {
      const tt = t.tokens[i]!;
      const kind = t.kinds[i]!;
      if (kind === 1 || tt === lt[i] || (kind === 2 && globMatch(tt, lt[i]!))) continue;
      n++;
      if (isWord(tt)) {
        tplWordPos.push(i);
        if (isWord(lt[i]!)) wordPos.push(i);
      }
    }
    return { n, words: wordPos.length, wordPos, tplWordPos };
  }

  /**
   * The template of the leaf, other than best, that holds the line's words at ps, accepts the line
   * and differs from it in no other word: the event the line's words name. The most similar one
   * (then more wildcards, then the older one), or undefined.
   */
  private sameWord(leaf: RefTemplate[], best: RefTemplate, lt: string[], ps: number[]): RefTemplate | undefined {
    let alt: RefTemplate | undefined;
    let aEq = 0;
    let aDen = 1;
    let aWild = -1;
    for (const u of leaf) {
      if (u === best || !ps.every((p) => u.tokens[p] === lt[p])) continue;
      const [eq, den, wild] = this.similarity(u, lt);
      if (!this.accepts(eq, den) || this.diffs(u, lt).words > 0) continue;
      const lhs = eq * aDen;
      const rhs = aEq * den;
      if (alt === undefined || lhs > rhs || (lhs === rhs && wild > aWild)) {
        alt = u;
        aEq = eq;
        aDen = den;
        aWild = wild;
      }
    }
    return alt;
  }

  /**
   * After tpl generalised, its skeleton may have changed: when a template of another length already
   * holds the new one, they are one event, so that one merges into tpl (tpl keeps its id, as in
   * absorb). Templates of one length are absorb's to merge: they are compared token by token.
   */
  private reskeleton(s: RefService, tpl: RefTemplate, out: CoreOutput): void {
    const sk = skeletonOf(tpl.tokens, tpl.kinds);
    if (sk === tpl.skel) return;
    if (tpl.skel !== '' && s.skels.get(tpl.skel) === tpl) s.skels.delete(tpl.skel);
    tpl.skel = sk;
    if (sk === '') return;
    const u = s.skels.get(sk);
    if (u !== undefined && u.tokens.length !== tpl.tokens.length && this.mergeBudget > 0) {
      this.mergeBudget--;
      this.retire(s, u, out, tpl.id);
    }
    if (!s.skels.has(sk)) s.skels.set(sk, tpl);
  }

  restore(svc: number, id: number, pattern: Uint8Array): void {
    const s = this.service(svc);
    const text = latin1(pattern, 0, pattern.length);
    if (this.byId.has(id)) return;
    let t: RefTemplate;
    const shape = text.length > 0 && text.charCodeAt(0) === 123 ? jsonShape(text) : null;
    if (shape && shape.shape === text) {
      if (s.shapes.has(text)) return;
      t = { id, used: 0, svc, json: true, leafKey: text, tokens: [], kinds: [], values: [], pattern: text, skel: '' };
    } else {
      const tokens = splitPattern(text).slice(0, MAX_TOKENS + 1);
      const kinds = tokens.map(tokenKind);
      t = { id, used: 0, svc, json: false, leafKey: leafKeyOf(tokens), tokens, kinds, values: valuePositions(tokens), pattern: tokens.join(' '), skel: skeletonOf(tokens, kinds) };
    }
    this.add(s, t, null);
    if (id >= this.next) this.next = id + 1;
  }

  // Long on purpose: the twin of assembly/logminer.ts's mine(), kept line for line so the two can be compared.
  mine(svc: number, n: number): CoreOutput {
    const out = this.out;
    out.changedCount = 0;
    out.evictedCount = 0;
    this.mergeBudget = n + LEAF_MAX;
    this.evictedPending.clear();
    const changedSet = new Set<number>();
    const s = this.service(svc);
    const { bytes, offsets } = this.input;
    for (let li = 0; li < n; li++) {
      const bs = offsets[li]!;
      const be = offsets[li + 1]!;
      const body = latin1(bytes, bs, be);
      let flags = 0;
      let pc = 0;
      const pbase = li * MAX_PARAMS;
      const addParam = (slot: number, s0: number, e0: number): void => {
        if (pc >= MAX_PARAMS) return;
        out.paramSlot[pbase + pc] = slot;
        out.paramStart[pbase + pc] = bs + s0;
        out.paramLen[pbase + pc] = e0 - s0;
        out.paramNum[pbase + pc] = parseNumber(body, s0, e0);
        pc++;
      };
      let tpl: RefTemplate | undefined;
      let newFrom = 0;
      const shape = this.firstNonWs(body) === 123 ? jsonShape(body) : null;
      if (shape) {
        flags |= FLAG_JSON;
        tpl = s.shapes.get(shape.shape);
        if (!tpl) {
          tpl = { id: this.next++, used: 0, svc, json: true, leafKey: shape.shape, tokens: [], kinds: [], values: [], pattern: shape.shape, skel: '' };
          this.add(s, tpl, out);
          flags |= FLAG_NEW;
        } else this.touch(s, tpl);
        for (let k = 0; k < shape.starts.length; k++) addParam(k, shape.starts[k]!, shape.ends[k]!);
      } else {
        const line = tokenizeLine(body);
        if (line.truncated) flags |= FLAG_TRUNCATED;
        const key = leafKeyOf(line.tokens);
        const leaf = s.leaves.get(key);
        const ntok = line.tokens.length;
        let best: RefTemplate | undefined;
        let bestEq = 0;
        let bestDen = 1;
        let bestWild = -1;
        if (leaf) {
          for (const t of leaf) {
            let eq = 0;
            let wild = 0;
            for (let i = 0; i < ntok; i++) {
              const tt = t.tokens[i]!;
              const kind = t.kinds[i]!;
              if (kind === 1) wild++;
              else if (tt === line.tokens[i] || (kind === 2 && globMatch(tt, line.tokens[i]!)) || sameKey(tt, line.tokens[i]!) || (t.values[i] && t.tokens[i - 1] === line.tokens[i - 1])) eq++;
            }
            const den = ntok - wild;
            const e = den === 0 ? 1 : eq;
            const d = den === 0 ? 1 : den;
            // better when e/d > bestEq/bestDen, or equal with more wildcards
            const lhs = e * bestDen;
            const rhs = bestEq * d;
            if (best === undefined || lhs > rhs || (lhs === rhs && wild > bestWild)) {
              best = t;
              bestEq = e;
              bestDen = d;
              bestWild = wild;
            }
          }
        }
        // accept at simNum/SIM_DEN, or when a single position differs and at least two agree
        let splitFrom = 0;
        if (best !== undefined && (bestEq * SIM_DEN >= this.simNum * bestDen || (bestDen - bestEq <= 1 && bestEq >= 2))) {
          // one position holds a different word in both (among any other differences): a constant
          // of an enum-like position (its own template) until the position has held more than
          // ENUM_MAX words, then a variable that merges them all. A template of the leaf that holds
          // the line's word there and accepts the line takes it instead (the same event).
          let d = this.diffs(best, line.tokens);
          let family: RefTemplate[] | null = null;
          if (d.words >= 1 && d.words <= ENUM_POSITIONS) {
            family = this.family(leaf!, best, d.wordPos);
            if (ReferenceCore.fewWords(family, d.wordPos)) {
              const alt = this.sameWord(leaf!, best, line.tokens, d.wordPos);
              if (alt !== undefined) {
                best = alt;
                d = this.diffs(alt, line.tokens);
                family = null;
              } else splitFrom = best.id;
            }
          }
          const nd = d.n;
          if (splitFrom === 0) {
            tpl = best;
            if (nd > 0) {
              // a value that is no word where the template holds one (`notes.txt` after `alpha`,
              // `gamma`): the position is a variable, so the templates split off there by their
              // words (the family) merge into this one as it generalises
              if (family === null && d.tplWordPos.length >= 1 && d.tplWordPos.length <= ENUM_POSITIONS) family = this.family(leaf!, tpl, d.tplWordPos);
              for (let i = 0; i < ntok; i++) {
                const tt = tpl.tokens[i]!;
                const kind = tpl.kinds[i]!;
                if (kind === 1 || tt === line.tokens[i]) continue;
                if (kind === 2 && globMatch(tt, line.tokens[i]!)) continue;
                const g = generalize(tt, line.tokens[i]!);
                tpl.tokens[i] = g;
                tpl.kinds[i] = tokenKind(g);
              }
              tpl.pattern = tpl.tokens.join(' ');
              tpl.values = valuePositions(tpl.tokens);
              flags |= FLAG_CHANGED;
              if (family) {
                for (let k = family.length - 1; k >= 0 && this.mergeBudget > 0; k--) {
                  if (family[k] === tpl) continue;
                  this.mergeBudget--;
                  this.retire(s, family[k]!, out, tpl.id);
                }
              }
              this.absorb(s, tpl, out);
              this.reskeleton(s, tpl, out);
            }
            this.touch(s, tpl);
          }
        }
        let byLength = false;
        if (tpl === undefined) {
          // no template of this length fits: one of another length with the same skeleton is the same event
          const sk = skeletonOf(line.tokens, line.tokens.map(tokenKind));
          const u = sk === '' ? undefined : s.skels.get(sk);
          if (u !== undefined && u.tokens.length !== ntok) {
            tpl = u;
            byLength = true;
            this.touch(s, tpl);
            skeletonParams(tpl.tokens, tpl.kinds, line, addParam);
          }
        }
        let byRun = false;
        if (tpl === undefined && splitFrom === 0) {
          // a template of another length whose `<*>` runs take the line's tokens (the most specific
          // one, then the oldest), else a phrase of plain words many templates differ in
          const hl = s.heads.get(headOf(key));
          if (hl !== undefined) {
            let bestC = -1;
            for (const u of hl) {
              if (u.tokens.length === ntok || !runCovers(u.tokens, u.kinds, line.tokens, this.at, this.runEnd)) continue;
              const c = constantsOf(u.kinds);
              if (c > bestC || (c === bestC && u.id < tpl!.id)) {
                tpl = u;
                bestC = c;
              }
            }
            if (tpl === undefined) {
              tpl = this.phrase(s, hl, line.tokens, out);
              if (tpl !== undefined) flags |= FLAG_CHANGED;
            }
            if (tpl !== undefined) {
              byRun = true;
              this.touch(s, tpl);
              runCovers(tpl.tokens, tpl.kinds, line.tokens, this.at, this.runEnd);
              runParams(tpl.tokens, tpl.kinds, line, this.at, this.runEnd, addParam);
            }
          }
        }
        if (tpl === undefined) {
          const tokens = line.tokens.slice();
          const kinds = tokens.map(tokenKind);
          tpl = { id: this.next++, used: 0, svc, json: false, leafKey: key, tokens, kinds, values: valuePositions(tokens), pattern: tokens.join(' '), skel: skeletonOf(tokens, kinds) };
          this.add(s, tpl, out);
          flags |= FLAG_NEW;
          newFrom = splitFrom;
        }
        if (!byLength && !byRun) {
          const last = line.truncated ? ntok - 1 : ntok;
          for (let i = 0; i < last && pc < MAX_PARAMS; i++) {
            const kind = tpl.kinds[i]!;
            if (kind === 0) continue;
            const off = line.offs[i]!;
            const raw = line.raw[i]!;
            if (line.varStart[i]! >= 0) addParam(i, off + line.varStart[i]!, off + line.varEnd[i]!);
            else if (kind === 1) addParam(i, off, off + raw.length);
            else {
              const tt = tpl.tokens[i]!;
              const lp = literalPrefix(tt);
              const ls = literalSuffix(tt);
              if (lp + ls < raw.length) addParam(i, off + lp, off + raw.length - ls);
              else addParam(i, off, off + raw.length);
            }
          }
        }
      }
      out.ids[li] = tpl.id;
      out.flags[li] = flags;
      out.splitFrom[li] = newFrom;
      out.paramCount[li] = pc;
      if ((flags & (FLAG_NEW | FLAG_CHANGED)) !== 0 && !changedSet.has(tpl.id)) {
        changedSet.add(tpl.id);
        out.changed[out.changedCount++] = tpl.id;
      }
    }
    return out;
  }

  private firstNonWs(body: string): number {
    for (let i = 0; i < body.length; i++) {
      const c = body.charCodeAt(i);
      if (!isWs(c)) return c;
    }
    return -1;
  }
}
