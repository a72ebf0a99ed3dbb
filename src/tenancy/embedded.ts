// The embedded control plane: one JSON file under SVC_DATA_DIR, for a single instance. Writes go
// to a temporary file that is synced and renamed over the old one, so a crash leaves either the old
// or the new state, never half of one. Only hashes are written; the file is readable by its owner only.
import { existsSync, readFileSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { ControlBackend, Snapshot, TenantRow, TenantStatus } from './control-plane.js';

interface FileState {
  version: number;
  tenants: Record<string, { status: TenantStatus; created_at: string; updated_at: string }>;
  keys: { hash: string; tenant: string; created_at: string; revoked_at: string | null }[];
}

export const EMBEDDED_FILE = 'control-plane.json';

export function openEmbeddedBackend(dataDir: string): ControlBackend {
  const path = join(dataDir, EMBEDDED_FILE);
  const state: FileState = existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as FileState) : { version: 0, tenants: {}, keys: [] };
  let queue: Promise<unknown> = Promise.resolve();
  // One change at a time: each is applied to the state and written before the next starts.
  const change = <T>(fn: () => T): Promise<T> => {
    const run = queue.then(async () => {
      const out = fn();
      state.version++;
      const tmp = `${path}.tmp`;
      const fh = await open(tmp, 'w', 0o600);
      try {
        await fh.writeFile(JSON.stringify(state));
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, path);
      return out;
    });
    queue = run.catch(() => {});
    return run;
  };
  const now = () => new Date().toISOString();
  return {
    kind: 'embedded',
    location: path,
    version: async () => state.version,
    snapshot: async (): Promise<Snapshot> => ({
      version: state.version,
      tenants: Object.entries(state.tenants).map(([id, t]) => ({ id, status: t.status })),
      keys: state.keys.filter((k) => k.revoked_at === null).map((k) => ({ hash: k.hash, tenant: k.tenant })),
    }),
    upsertTenant: (id) =>
      change((): TenantRow => {
        const t = state.tenants[id];
        if (t) Object.assign(t, { status: 'active', updated_at: now() });
        else state.tenants[id] = { status: 'active', created_at: now(), updated_at: now() };
        return { id, status: 'active' };
      }),
    async deactivateTenant(id) {
      if (!state.tenants[id]) return null;
      return change((): TenantRow => {
        Object.assign(state.tenants[id]!, { status: 'inactive', updated_at: now() });
        return { id, status: 'inactive' };
      });
    },
    async addKey(tenant, hash) {
      if (state.tenants[tenant]?.status !== 'active') return false;
      return change(() => {
        state.keys.push({ hash, tenant, created_at: now(), revoked_at: null });
        return true;
      });
    },
    async revokeByPrefix(prefix) {
      const live = state.keys.filter((k) => k.revoked_at === null && k.hash.startsWith(prefix));
      if (live.length !== 1) return { matched: live.length, hash: null };
      return change(() => {
        live[0]!.revoked_at = now();
        return { matched: 1, hash: live[0]!.hash };
      });
    },
    close: async () => {
      await queue;
    },
  };
}
