// How the tokens of a template relate to each other and to a line's (the reference engine;
// assembly/logminer.ts has a twin of each): kinds (constant, `<*>`, partly variable), words, the
// skeleton that joins templates of different lengths, glob and key=value matching, generalising a
// token, the leaf key that routes a line, and the run covers and phrases of plain words that join a
// line to a template of another length.
import { PREFIX_TOKENS } from './core.js';
import { WILDCARD, isAlpha, isDigit, isGenDelim, isUpper } from './chars.js';

/** 0: constant, 1: exactly `<*>`, 2: contains `<*>` */
export function tokenKind(t: string): number {
  if (t === WILDCARD) return 1;
  return t.includes(WILDCARD) ? 2 : 0;
}

/**
 * A word: what an enum-like position holds (Started, create, initialization., TASK_ABORT, SOCKS5;
 * "GET): two or more letters, or a name in capitals (two capitals, then capitals, digits, `_` or `-`,
 * ending in a capital or digit, as constants are written), and at most one trailing . , ; : ! or ?.
 * A lower-case name with digits, `_` or `-` (`ops-admin1`, `backup_daily`, `eth0`) names a thing: a
 * value, not a word. `names` false (eval:logs' ablation of class 3): letters only, no trailing mark.
 */
export function isWord(t: string, names = true): boolean {
  // the method of a quoted request line keeps its opening quote ("GET, "POST: isRequestLine)
  const s = t.length > 0 && t.charCodeAt(0) === 34 ? 1 : 0;
  let e = t.length;
  if (names && e - s > 2 && isEndMark(t.charCodeAt(e - 1))) e--;
  if (e - s < 2) return false;
  let letters = true;
  let caps = true;
  for (let i = s; i < e; i++) {
    const c = t.charCodeAt(i);
    if (!isAlpha(c)) letters = false;
    if (!(isUpper(c) || ((isDigit(c) || c === 95 || c === 45) && i >= s + 2))) caps = false;
  }
  const z = t.charCodeAt(e - 1);
  return letters || (names && caps && (isUpper(z) || isDigit(z)));
}
/** . , ; : ! ? */
const isEndMark = (c: number): boolean => c === 46 || c === 44 || c === 59 || c === 58 || c === 33 || c === 63;

/**
 * Do two words name different things: do they differ in more than their digits? `HTTPS` / `SOCKS5`
 * do; `NODE1` / `NODE12` are one name numbered (a variable).
 */
export function wordsDiffer(a: string, b: string): boolean {
  let i = 0;
  let j = 0;
  for (;;) {
    while (i < a.length && isDigit(a.charCodeAt(i))) i++;
    while (j < b.length && isDigit(b.charCodeAt(j))) j++;
    if (i === a.length || j === b.length) return i !== a.length || j !== b.length;
    if (a.charCodeAt(i++) !== b.charCodeAt(j++)) return true;
  }
}

/** Is a token part of a variable run: it holds `<*>` and is not key=value (whose key is a constant word)? */
export function isRunToken(t: string, kind: number): boolean {
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
export function literalPrefix(t: string): number {
  const i = t.indexOf(WILDCARD);
  return i < 0 ? t.length : i;
}
export function literalSuffix(t: string): number {
  const i = t.lastIndexOf(WILDCARD);
  return i < 0 ? t.length : t.length - i - 3;
}

/**
 * Leaf of a line or template: its token count and leading tokens, a variable one or one with a digit
 * (an id the masking kept, jk2_init) as one wildcard and a key=value one by its key alone
 * (`user=bob logged in` and `user=eve logged in` share a leaf).
 */
export function leafKeyOf(tokens: string[]): string {
  let k = String(tokens.length);
  for (let i = 0; i < PREFIX_TOKENS && i < tokens.length; i++) {
    const t = tokens[i]!;
    const eq = t.indexOf('=');
    k += '\u0000' + (tokenKind(t) !== 0 || /[0-9]/.test(t) ? '\u0001' : eq >= 0 && eq < t.length - 1 ? t.slice(0, eq + 1) : t);
  }
  return k;
}

/** The leading-token part of a leaf key (the key without the token count): where templates of any length that begin alike are listed. */
export function headOf(leafKey: string): string {
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
export function phraseContext(kinds: number[], p: number, q: number): boolean {
  const c = constantsAround(kinds, p, kinds.length - q);
  return c >= 2 || (c === 1 && p === 1 && q === 0);
}

/** Are tokens [a, b) one or more plain words of a phrase? */
export function phraseRun(tokens: string[], a: number, b: number): boolean {
  if (a >= b) return false;
  for (let i = a; i < b; i++) if (!isPhraseWord(tokens[i]!)) return false;
  return true;
}

/** Does template token tt (kind k) take line token lt one for one: equal, a glob that matches, or key=value with the same key? */
export function coversToken(tt: string, k: number, lt: string): boolean {
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
export function runCovers(tt: string[], tk: number[], lt: string[], at: number[], runEnd: number[]): boolean {
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
export function constantsOf(kinds: number[]): number {
  let c = 0;
  for (const k of kinds) if (k !== 1) c++;
  return c;
}

/** A value in a loose segment: a variable that is no key=value (a key names a field), or a constant without a letter (`-`, `()`: a value left out). */
function isLooseValue(t: string, k: number): boolean {
  if (k !== 0) return t.indexOf('=') < 0;
  for (let i = 0; i < t.length; i++) if (isAlpha(t.charCodeAt(i))) return false;
  return true;
}

/**
 * The values of tokens [a, b) (isLooseValue) when they are a value with its decoration, 0 when empty,
 * else -1: a value first, and every other token a unit right after a value: three letters at most,
 * and no key (`<*> KB)`, `<*> min <*> sec`; not `src: <*>`, not `<*> from <*>`, not `user=<*>`).
 */
function decorated(t: string[], k: number[], a: number, b: number): number {
  let vals = 0;
  let prev = false;
  for (let i = a; i < b; i++) {
    const v = isLooseValue(t[i]!, k[i]!);
    if (v) vals++;
    else if (!prev || !isUnit(t[i]!)) return -1;
    prev = v;
  }
  return vals;
}

/** A unit after a value: a constant of at most three letters that is no key (`KB)`, `sec`, `ms,`). */
function isUnit(t: string): boolean {
  const c = t.charCodeAt(t.length - 1);
  if (c === 58 || c === 61) return false;
  let letters = 0;
  for (let i = 0; i < t.length; i++) if (isAlpha(t.charCodeAt(i))) letters++;
  return letters <= 3;
}

/**
 * Do tokens [a, b) of t (kinds tk) and [c, d) of l (kinds lk), the part of each between two constants
 * they share, say the same thing, one of them with an optional part inside a variable? Each side is
 * empty or a value with its decoration (decorated: `(<*> KB)`, `<<*> sec`), and when only one side
 * has a unit the two differ in their values too (the value changed form; a word next to a value
 * that did not, `<*> not` against `<*>`, names another event; a unit that changed, `<*> KB)`
 * against `<*> MB)`, does not). Sets slot[j] for the line tokens j in [c, d): the position of the
 * template variable the j-th variable of the line takes (in order, the last one beyond), else -1.
 */
function looseSegment(tt: string[], tk: number[], a: number, b: number, lt: string[], lk: number[], c: number, d: number, slot: number[]): boolean {
  const tv = decorated(tt, tk, a, b);
  const lv = decorated(lt, lk, c, d);
  if (tv < 0 || lv < 0) return false;
  if ((b - a - tv === 0) !== (d - c - lv === 0)) {
    let same = tv === lv;
    for (let i = a, j = c; same && i < b; i++) {
      if (!isLooseValue(tt[i]!, tk[i]!)) continue;
      while (!isLooseValue(lt[j]!, lk[j]!)) j++;
      same = tt[i] === lt[j++];
    }
    if (same) return false;
  }
  let i = a;
  let last = -1;
  for (let j = c; j < d; j++) {
    if (lk[j] === 0) {
      slot[j] = -1;
      continue;
    }
    while (i < b && tk[i] === 0) i++;
    if (i < b) last = i++;
    slot[j] = last;
  }
  return true;
}

/**
 * Does template tt (kinds tk) take line lt (kinds lk), of any length, when a variable may come with an
 * optional part (`<*> bytes sent` and `<*> bytes (<*> KB) sent`; `lifetime <*>:<*>` and `lifetime
 * <<*> sec`)? The template's constants are matched in order to equal line constants (key=value by
 * its key), each to the first one after the last match, and what lies between two matches must
 * agree as looseSegment says. Needs two matched constants and a variable (lineVars: the line's). Returns
 * their number, else 0; on success slot[j] is the template position line token j's value goes to, or -1.
 */
export function looseCovers(tt: string[], tk: number[], lt: string[], lk: number[], slot: number[], lineVars: number): number {
  const m = tt.length;
  const n = lt.length;
  let vars = 0;
  for (let i = 0; i < m; i++) if (tk[i] !== 0) vars++;
  if (vars + lineVars === 0) return 0;
  let pi = -1;
  let pj = -1;
  let anchors = 0;
  for (;;) {
    // the next template constant the line holds after the last match; the ones skipped must be decoration
    let ni = pi + 1;
    let nj = n;
    let skipped = 0;
    for (; ni < m; ni++) {
      if (tk[ni] !== 0) continue;
      // the search passes values and units only: past another constant the line's part would be no decoration
      let q = pj + 1;
      while (q < n && !(lk[q] === 0 && (lt[q] === tt[ni] || sameKey(tt[ni]!, lt[q]!)))) {
        if (!isLooseValue(lt[q]!, lk[q]!) && !isUnit(lt[q]!)) q = n;
        else q++;
      }
      if (q < n) {
        nj = q;
        break;
      }
      if (++skipped > vars || (!isLooseValue(tt[ni]!, 0) && !isUnit(tt[ni]!))) return 0;
    }
    if (!looseSegment(tt, tk, pi + 1, ni, lt, lk, pj + 1, nj, slot)) return 0;
    if (ni === m) break;
    slot[nj] = -1;
    anchors++;
    pi = ni;
    pj = nj;
  }
  return anchors >= 2 ? anchors : 0;
}

/**
 * The name of the field a key=value token writes (`user=root`, `(uid=<*>)`, `ruser=`: user, uid,
 * ruser): its bytes before the first '=' from the first letter on, when they are letters, digits,
 * `_`, `-` or `.`; else ''.
 */
export function fieldKey(t: string): string {
  const k = t.indexOf('=');
  if (k <= 0) return '';
  let a = 0;
  while (a < k && !isAlpha(t.charCodeAt(a))) a++;
  if (a === k) return '';
  for (let i = a; i < k; i++) {
    const c = t.charCodeAt(i);
    if (!isAlpha(c) && !isDigit(c) && c !== 95 && c !== 45 && c !== 46) return '';
  }
  return t.slice(a, k);
}

/** The field a word position is the value of, when the token before it names one: that token without one trailing ':'. */
export function fieldBefore(t: string): string {
  return t.length > 1 && t.charCodeAt(t.length - 1) === 58 ? t.slice(0, -1) : t;
}

