// Masking one token of a log line (the reference engine; assembly/logminer.ts masks the same way).
// Variables are masked by what they are, wherever they stand: URLs (the scheme kept), absolute and
// relative paths, e-mail addresses, over-long tokens, IPv6 and MAC addresses and dates with a month
// name (masked whole), host names (a dotted name before ':port' or ending in a known TLD: masked
// whole), a quoted string with spaces when any word in it is a variable, and inside each token every
// segment between delimiters (= : , ; @ / ( ) [ ] { } < > " ' | \ # ! ? &) that holds a number-like
// part (a part starting with a digit: numbers, IPs, ports, timestamps, durations such as 12ms, hex
// 0x.., versions), a hex run of 6 or more with a digit (hashes, UUIDs, short commit ids) or a
// numbered name (web01). One leading alphabetic word joined by '.' or '-' stays (node-<*>, core.<*>;
// but mesos-slave-13 → <*>), one joined by '_' does not (blk_123 → <*>); trailing dots stay outside
// (port 8030. → <*>.). key=value keeps the key, quotes stay; a path after '=', '(' or ':' is masked
// whole (shell=<*>, chdir(<*>)).
import { LONG_TOKEN } from './core.js';
import { MONTH_NAMES } from './dates.js';
import {
  WILDCARD, isAlpha, isClose, isDelim, isDigit, isEmailLocal, isHex, isOpen, isPathEnd, isPathLead, isSchemeChar, isSep, isSubSep,
} from './chars.js';

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

/** Month abbreviations a date inside one token may hold (wholeRunEnd). */
const MONTHS = new Set(MONTH_NAMES.map((m) => m.slice(0, 3)));
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
