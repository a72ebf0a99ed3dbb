// Splitting a log body into tokens (the reference engine; assembly/logminer.ts tokenises the same
// way). Tokens are runs between whitespace or control bytes; at most MATCH_BYTES bytes and MAX_TOKENS
// tokens are looked at, and a longer line ends in one synthetic `<*>` token. A double-quoted string
// with spaces at a value position is one token (quoteEnd), so a quoted message or User-Agent of any
// length keeps the token count fixed; a quoted request line at a token's start splits into its words
// (isRequestLine), so its method is a word. After `statement:` the rest of the line is one value. The
// weekday and month names of a date written in words are variables (dates.ts).
import { MATCH_BYTES, MAX_TOKENS, QUOTE_MAX } from './core.js';
import { WILDCARD, isAlpha, isSep, isUpper, isWild } from './chars.js';
import { dateWords } from './dates.js';
import { maskToken, type Masked } from './mask.js';

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

/** A body split into masked tokens, with where each raw token and its variable part lie. */
export interface Line {
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

/** Splits and masks one body (a binary string); `dates` false keeps the names of a date as words (eval:logs' ablation). */
export function tokenizeLine(body: string, dates = true): Line {
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
  const dw = dates ? dateWords(line.raw) : [];
  for (let k = 0; k < dw.length; k++) {
    if (dw[k] === 0) continue;
    line.tokens[k] = WILDCARD + line.raw[k]!.slice(dw[k]);
    line.varStart[k] = 0;
    line.varEnd[k] = dw[k]!;
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
