// The server the diagnosis benchmarks run on bench:diagnose's store (diagnose-store.ts): started on
// the cached store as it is, every generated bucket closed by its first detection pass and no second
// pass during the measurements.
import { settingDefault } from '../../src/core/config.js';
import { serverEnv, startChildServer, type ChildServer } from '../../testkit/server.js';

async function getJson(base: string, path: string): Promise<Record<string, unknown>> {
  const res = await fetch(new URL(path, base));
  return (await res.json()) as Record<string, unknown>;
}

/** Waits for the detection pass the server runs at start; returns its report. */
export async function detectionDone(srv: ChildServer, timeoutMs: number): Promise<Record<string, unknown>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const st = (await getJson(srv.api, '/admin/status'))['status'] as Record<string, Record<string, unknown>>;
    const d = st['detection']!;
    if (d['last_error']) throw new Error(`detection pass failed: ${String(d['last_error'])}`);
    if (Number(d['passes']) >= 1) return d['last'] as Record<string, unknown>;
    if (Date.now() > end) throw new Error(`no detection pass after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

export function serveStore(dir: string): Promise<ChildServer> {
  return startChildServer(
    {
      SVC_FLUSH_INTERVAL_MS: settingDefault('SVC_FLUSH_INTERVAL_MS'),
      SVC_DETECT_GRACE_S: '0', // every generated bucket is over: close them all in the pass at start
      SVC_DETECT_INTERVAL_S: '86400', // and no second pass in the middle of the measurements
      SVC_RETENTION_HOURS: '87600', // the cached store ages; retention must not eat it
      ...serverEnv(),
    },
    dir,
  );
}
