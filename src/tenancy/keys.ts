// Tenant keys and ids, as pure functions. A key is `tds_` + 32 random bytes in base64url (256 bits);
// only its SHA-256 (hex) is ever stored, and `short_token` is a prefix of that hash, so neither a
// log line nor the control plane holds anything that authenticates.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const KEY_PREFIX = 'tds_';
const KEY_BYTES = 32;
/** `tds_` and 43 base64url characters: the only shape a key can have (checked before hashing). */
const KEY_SHAPE = /^tds_[A-Za-z0-9_-]{43}$/;
/** Lower-case letters, digits, `-` and `_`, starting with a letter or digit, 1-63 characters: safe as a directory name on any file system. */
const TENANT_ID = /^[a-z0-9][a-z0-9_-]{0,62}$/;
/** `default` is open mode's own store (SVC_DATA_DIR/lake.duckdb), never a hosted tenant's. */
const RESERVED_IDS = new Set(['default']);
export const SHORT_TOKEN = /^[0-9a-f]{8,64}$/;

export function generateKey(): string {
  return KEY_PREFIX + randomBytes(KEY_BYTES).toString('base64url');
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function isKeyShaped(s: string): boolean {
  return KEY_SHAPE.test(s);
}

/** The token of an `Authorization: Bearer <token>` header, or null (missing, another scheme, empty). */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^\s*bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : null;
}

/** Equal strings, in time that depends only on their lengths (hashed first, so not even on those). */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/** Why a tenant id is refused, or null when it is valid. */
export function tenantIdProblem(id: unknown): string | null {
  if (typeof id !== 'string') return 'the tenant id must be a string';
  if (!TENANT_ID.test(id)) return 'a tenant id is 1-63 characters of lower-case letters, digits, `-` and `_`, starting with a letter or digit';
  if (RESERVED_IDS.has(id)) return `the tenant id ${id} is reserved`;
  return null;
}
