// Byte classes of the log miner's reference engine (ASCII codes of a "binary string", one char per
// byte). assembly/logminer.ts keeps the same classes in one 256-entry table.

/** What a masked variable becomes in a template. */
export const WILDCARD = '<*>';

export const isSep = (c: number): boolean => c <= 0x20 || c === 0x7f;
export const isDigit = (c: number): boolean => c >= 48 && c <= 57;
export const isAlpha = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
export const isHex = (c: number): boolean => isDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
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
export const isSubSep = (c: number): boolean => c === 46 || c === 45 || c === 95 || c === 43; // . - _ +
export const isOpen = (c: number): boolean => c === 40 || c === 91 || c === 123 || c === 60 || c === 34 || c === 39;
export const isClose = (c: number): boolean =>
  c === 41 || c === 93 || c === 125 || c === 62 || c === 34 || c === 39 || c === 44 || c === 59 || c === 58 ||
  c === 46 || c === 33 || c === 63;
export const isPathLead = (c: number): boolean => c === 61 || c === 40 || c === 58; // = ( :
export const isPathEnd = (c: number): boolean =>
  c === 44 || c === 59 || c === 41 || c === 93 || c === 125 || c === 34 || c === 39 || c === 38 || c === 124; // , ; ) ] } " ' & |
export const isSchemeChar = (c: number): boolean => isAlpha(c) || isDigit(c) || c === 43 || c === 45 || c === 46;
export const isEmailLocal = (c: number): boolean =>
  isAlpha(c) || isDigit(c) || c === 46 || c === 95 || c === 37 || c === 43 || c === 45;
export const isUpper = (c: number): boolean => c >= 65 && c <= 90;
export const isWild = (t: string, i: number, e: number): boolean =>
  i + 3 <= e && t.charCodeAt(i) === 60 && t.charCodeAt(i + 1) === 42 && t.charCodeAt(i + 2) === 62;
export const isWs = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 13;
export const isScalarChar = (c: number): boolean => isAlpha(c) || isDigit(c) || c === 43 || c === 45 || c === 46;
