// A registry over stand-in runtimes, numbered from 1 as they open, for the registry's bookkeeping:
// each has a writer whose stats() the test decides, and opening and closing are recorded.
import { createRegistry, type TenantRegistry } from '../../src/tenancy/registry.js';
import type { TenantRuntime } from '../../src/tenancy/runtime.js';
import type { WriterStats } from '../../src/store/writer.js';

export function registryOverFakes(
  stats: (n: number) => Partial<WriterStats>,
  opts: Partial<Parameters<typeof createRegistry>[0]> = {},
): { registry: TenantRegistry; events: string[]; logs: Record<string, unknown>[]; which: (rt: TenantRuntime) => number } {
  const events: string[] = [];
  const logs: Record<string, unknown>[] = [];
  let opened = 0;
  const registry = createRegistry({
    dataDir: '/nonexistent',
    idleS: 3600,
    pinned: ['default'],
    log: (f) => logs.push(f),
    open: async (tenant) => {
      const n = ++opened;
      events.push(`open ${n}`);
      return { tenant, n, writer: { stats: () => stats(n) }, close: async () => void events.push(`close ${n}`) } as unknown as TenantRuntime;
    },
    ...opts,
  });
  return { registry, events, logs, which: (rt) => (rt as unknown as { n: number }).n };
}
