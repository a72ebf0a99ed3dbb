// Entry point: validate configuration, start, log the bound ports as JSON lines, and shut down
// gracefully on SIGTERM/SIGINT (stop accepting, finish in-flight requests, commit, checkpoint, exit 0).
import './env-init.js';
import { allocatorWarning, heapTrim, trimHeaps, usesGlibc } from './core/allocator.js';
import { ConfigError, loadConfig } from './core/config.js';
import { jsonLog, startServer } from './server.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      jsonLog({ level: 'fatal', msg: err.message });
      process.exit(2);
    }
    throw err;
  }
  const allocator = allocatorWarning(process.env, usesGlibc());
  if (allocator) jsonLog({ level: 'warn', msg: allocator });
  const running = await startServer(config);
  const trim = heapTrim();
  if (typeof trim === 'function') trimHeaps(trim);
  else if (trim.unavailable !== 'not glibc') jsonLog({ level: 'warn', msg: `glibc's heaps are not trimmed (${trim.unavailable}): memory freed after a load peak may stay resident` });
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    jsonLog({ level: 'info', msg: 'shutting down', signal });
    running.stop().then(
      () => {
        jsonLog({ level: 'info', msg: 'stopped' });
        process.exit(0);
      },
      (err) => {
        jsonLog({ level: 'fatal', msg: 'shutdown failed', error: String(err) });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err) => {
  jsonLog({ level: 'fatal', msg: 'start failed', error: (err as Error).message });
  process.exit(1);
});
