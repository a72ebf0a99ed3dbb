// The date recogniser across tokens (the reference engine; assembly/logminer.ts recognises the same
// dates). A date written in words spreads over several tokens (`Sun Jul 17 23:21:54 2005`,
// `17 July 2005`, `Thu Aug 11 15:29:06 PDT 2005`); masking token by token masks its numbers and keeps
// the weekday and month names, which then read as constant words, so one event splits per weekday and
// month. A weekday or month name is a variable when it is part of a date: next to a date number (a
// day, a year, a time or a numeric date) or to another name that is, and so is a zone of capitals
// between a time and a year. Outside a date (`on Sunday`, `may`) a name stays a word. The names come
// from the calendar, not from any log source.
import { isAlpha, isDigit, isUpper } from './chars.js';

/** Weekday and month names: a name is one of these or its first three letters, in any case. */
export const WEEKDAY_NAMES = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
export const MONTH_NAMES = [
  'january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december',
];
const NAMES = new Set([...WEEKDAY_NAMES, ...MONTH_NAMES].flatMap((n) => [n, n.slice(0, 3)]));

/** The length of t without one trailing ',' or '.'. */
function bare(t: string): number {
  const n = t.length;
  return n > 1 && (t.charCodeAt(n - 1) === 44 || t.charCodeAt(n - 1) === 46) ? n - 1 : n;
}

/** Is raw token t a weekday or month name (an optional trailing ',' or '.')? */
function isDateName(t: string): boolean {
  const n = bare(t);
  if (n < 3 || n > 9) return false;
  for (let i = 0; i < n; i++) if (!isAlpha(t.charCodeAt(i))) return false;
  return NAMES.has(t.slice(0, n).toLowerCase());
}

/**
 * Is raw token t a date number: a day or a year (1, 2 or 4 digits), a time (`23:21:54`, `10:00`,
 * `10:00:00.250`) or a numeric date (`2005-07-17`, `17/07/2005`), with an optional trailing ',' or '.'?
 */
function isDateNumber(t: string): boolean {
  const n = bare(t);
  if (n === 0 || n > 15 || !isDigit(t.charCodeAt(0)) || !isDigit(t.charCodeAt(n - 1))) return false;
  let seps = 0;
  for (let i = 0; i < n; i++) {
    const c = t.charCodeAt(i);
    if (c === 58 || c === 45 || c === 47 || c === 46) seps++;
    else if (!isDigit(c)) return false;
  }
  return seps > 0 || n <= 2 || n === 4;
}

/** Is raw token t a time (digits with a ':')? */
function isTime(t: string): boolean {
  return isDateNumber(t) && t.includes(':');
}

/** Is raw token t a zone: three to five capitals (`PDT`, `UTC`, `CEST`)? */
function isZone(t: string): boolean {
  if (t.length < 3 || t.length > 5) return false;
  for (let i = 0; i < t.length; i++) if (!isUpper(t.charCodeAt(i))) return false;
  return true;
}

/**
 * The tokens of a line (raw, as written) that are the words of a date: names next to a date number or
 * to a name that is (right to left, so `Sun` before `Jul 17` is one), and a zone between a time and
 * a year. Returns, per token, the length of the part to mask (the token without a trailing ',' or
 * '.'), or 0.
 */
export function dateWords(raw: readonly string[]): number[] {
  const n = raw.length;
  const out = new Array<number>(n).fill(0);
  for (let i = n - 1; i >= 0; i--) {
    const t = raw[i]!;
    if (isDateName(t)) {
      if ((i > 0 && isDateNumber(raw[i - 1]!)) || (i + 1 < n && (isDateNumber(raw[i + 1]!) || out[i + 1]! > 0))) out[i] = bare(t);
    } else if (i > 0 && i + 1 < n && isZone(t) && isTime(raw[i - 1]!) && raw[i + 1]!.length === 4 && isDateNumber(raw[i + 1]!)) out[i] = t.length;
  }
  return out;
}
