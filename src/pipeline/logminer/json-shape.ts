// The shape of a JSON object body without a message field (the reference engine; assembly/logminer.ts
// computes the same shape): its keys and structure with every value `<*>`, for example
// `{"level":<*>,"user":{"id":<*>},"tags":[<*>]}`, matched exactly. Objects nested deeper than
// JSON_MAX_DEPTH and arrays are one value; a body over JSON_MAX_BYTES or with more than JSON_MAX_KEYS
// keys in an object is mined as text.
import { JSON_MAX_BYTES, JSON_MAX_DEPTH, JSON_MAX_KEYS, MAX_PARAMS } from './core.js';
import { WILDCARD, isWs, isScalarChar } from './chars.js';

export interface JsonShape {
  shape: string;
  /** raw value ranges in body coordinates, up to MAX_PARAMS */
  starts: number[];
  ends: number[];
}

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
