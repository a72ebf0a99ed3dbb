// DuckDB values → JSON-ready values for `/v1/query` answers. The rules (documented in the API
// description too):
//   - BOOLEAN, integers up to ±(2^53 − 1), finite FLOAT/DOUBLE → JSON booleans and numbers.
//   - BIGINT/UBIGINT/HUGEINT/UHUGEINT/BIGNUM beyond ±(2^53 − 1) → decimal strings (exact).
//   - NaN, +Infinity, −Infinity → the strings "NaN", "Infinity", "-Infinity" (as in the proto3 JSON mapping).
//   - DECIMAL → a number when the number, printed back at the column's scale, gives the same decimal
//     (so 1.10 → 1.1 and 0.30 → 0.3), else the exact decimal string.
//   - TIMESTAMP, TIMESTAMP_S/MS, TIMESTAMP WITH TIME ZONE → ISO 8601 in UTC with exactly six fractional
//     digits: "2024-01-01T00:00:00.123456Z"; TIMESTAMP_NS → nine digits. ±infinity → "infinity"/"-infinity".
//   - DATE → "YYYY-MM-DD"; TIME → "HH:MM:SS[.ffffff]"; INTERVAL → DuckDB's text form ("1 day 02:00:00").
//   - VARCHAR, UUID, ENUM, BIT → strings; BLOB → base64.
//   - LIST and ARRAY → JSON arrays; STRUCT → objects; MAP → an object keyed by the map keys as text;
//     UNION → the value of its active member; VARIANT and anything else → DuckDB's text form.
import { isoFromMicros, isoFromNanos } from '../core/time.js';
import {
  DuckDBArrayValue,
  DuckDBBitValue,
  DuckDBBlobValue,
  DuckDBDateValue,
  DuckDBDecimalValue,
  DuckDBIntervalValue,
  DuckDBListValue,
  DuckDBMapValue,
  DuckDBStructValue,
  DuckDBTimestampMillisecondsValue,
  DuckDBTimestampNanosecondsValue,
  DuckDBTimestampSecondsValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  DuckDBUnionValue,
  type DuckDBValue,
} from '@duckdb/node-api';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonRow = Record<string, JsonValue>;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = -MAX_SAFE;

/** Sets a key on a plain object even when the key is `__proto__` (a column may be named anything). */
export function setKey(obj: Record<string, JsonValue>, key: string, value: JsonValue): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

export function toJsonValue(v: DuckDBValue): JsonValue {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case 'boolean':
    case 'string':
      return v;
    case 'number':
      return Number.isFinite(v) ? v : Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
    case 'bigint':
      return v >= MIN_SAFE && v <= MAX_SAFE ? Number(v) : v.toString();
    default:
      break;
  }
  if (v instanceof DuckDBTimestampValue) return v.isFinite ? isoFromMicros(v.micros) : infinity(v.micros);
  if (v instanceof DuckDBTimestampTZValue) return v.isFinite ? isoFromMicros(v.micros) : infinity(v.micros);
  if (v instanceof DuckDBTimestampSecondsValue) return v.isFinite ? isoFromMicros(v.seconds * 1_000_000n) : infinity(v.seconds);
  if (v instanceof DuckDBTimestampMillisecondsValue) return v.isFinite ? isoFromMicros(v.millis * 1000n) : infinity(v.millis);
  if (v instanceof DuckDBTimestampNanosecondsValue) return v.isFinite ? isoFromNanos(v.nanos) : infinity(v.nanos);
  if (v instanceof DuckDBDateValue) return v.toString();
  if (v instanceof DuckDBDecimalValue) return decimalToJson(v);
  if (v instanceof DuckDBListValue || v instanceof DuckDBArrayValue) return v.items.map(toJsonValue);
  if (v instanceof DuckDBStructValue) {
    const out: Record<string, JsonValue> = {};
    for (const [k, item] of Object.entries(v.entries)) setKey(out, k, toJsonValue(item));
    return out;
  }
  if (v instanceof DuckDBMapValue) {
    const out: Record<string, JsonValue> = {};
    for (const e of v.entries) {
      const k = toJsonValue(e.key);
      setKey(out, typeof k === 'string' ? k : JSON.stringify(k), toJsonValue(e.value));
    }
    return out;
  }
  if (v instanceof DuckDBBlobValue) return Buffer.from(v.bytes.buffer, v.bytes.byteOffset, v.bytes.byteLength).toString('base64');
  if (v instanceof DuckDBUnionValue) return toJsonValue(v.value);
  if (v instanceof DuckDBBitValue || v instanceof DuckDBIntervalValue) return v.toString();
  return String(v);
}

function infinity(sign: bigint): string {
  return sign > 0n ? 'infinity' : '-infinity';
}

function decimalToJson(v: DuckDBDecimalValue): number | string {
  const text = v.toString();
  const n = Number(text);
  if (Number.isFinite(n) && Math.abs(n) < 1e21 && v.scale <= 100 && canonicalDecimal(n.toFixed(v.scale)) === canonicalDecimal(text)) return n;
  return text;
}

/** "-0.50" → "-0.5", "1.000" → "1", "-0" → "0": for comparing decimal texts. */
function canonicalDecimal(s: string): string {
  let t = s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
  t = t.replace(/^(-?)0+(?=\d)/, '$1');
  return t === '-0' ? '0' : t;
}
