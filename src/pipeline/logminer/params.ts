// The parameters of a line (the reference engine; assembly/logminer.ts reports the same): the byte
// range of each variable value, its template slot, and its numeric value.
import { isAlpha, isDigit, WILDCARD } from './chars.js';
import type { Line } from './tokenize.js';
import { literalPrefix, literalSuffix, tokenKind, isRunToken } from './tokens.js';

/** Receives one parameter: its template slot and its byte range in the body. */
export type AddParam = (slot: number, s: number, e: number) => void;

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

/**
 * Parameters of a line covered by a template through runCovers (at, runEnd): a token taken one for
 * one gives its variable part as the main path does; the tokens a `<*>` run took give one value per
 * run position, the run's last position the rest of them as one span (`no route to host`).
 */
export function runParams(tt: string[], tk: number[], line: Line, at: number[], runEnd: number[], addParam: AddParam): void {
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
export function tokenParam(tt: string, k: number, line: Line, j: number, slot: number, addParam: AddParam): void {
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
export function skeletonParams(tt: string[], tk: number[], line: Line, addParam: AddParam): void {
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
