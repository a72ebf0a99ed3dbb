// Starts the built server (dist/src/main.js) as a child process on free ports with its own data directory,
// reading the ports from its JSON log lines, as scripts and operators do.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../src/core/paths.js';
import { settingDefault } from '../src/core/config.js';
import { allocatorEnv } from '../src/core/allocator.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';

export interface ChildServer {
  api: string;
  otlpHttp: string;
  otlpGrpc: string;
  ports: { api: number; otlpHttp: number; otlpGrpc: number };
  dataDir: string;
  child: ChildProcess;
  logs: Record<string, unknown>[];
  /** SIGTERM, wait for exit and for the last line of output to reach `logs`; returns the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait. */
  kill(): Promise<void>;
  cleanup(): void;
  /** Peak resident set size of the server process so far, bytes (Linux). */
  peakRss(): number;
  /** CPU seconds (user + system, all threads) the server process has used so far (Linux; 0 elsewhere). */
  cpuSeconds(): number;
}

/** `onSpawn`: told the process as soon as it exists, before it listens (a test may kill it while it starts). */
export async function startChildServer(env: Record<string, string> = {}, dataDir?: string, onSpawn?: (child: ChildProcess) => void): Promise<ChildServer> {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'tds-srv-'));
  const tmp = { dir, cleanup: () => (dataDir ? undefined : rmSync(dir, { recursive: true, force: true })) };
  const child = spawn(process.execPath, [join(PACKAGE_ROOT, 'dist', 'src', 'main.js')], {
    env: {
      PATH: process.env['PATH'] ?? '',
      SVC_DATA_DIR: tmp.dir,
      SVC_API_PORT: '0',
      SVC_OTLP_HTTP_PORT: '0',
      SVC_OTLP_GRPC_PORT: '0',
      SVC_FLUSH_INTERVAL_MS: '5',
      ...allocatorEnv(), // as `npm start` runs it
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  onSpawn?.(child);
  const logs: Record<string, unknown>[] = [];
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const ports: Record<string, number> = {};
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const rl = createInterface({ input: child.stdout! });
  // Resolves once every line the child wrote has been read, so `logs` is complete after stop().
  const drained = new Promise<void>((r) => rl.once('close', r));
  await new Promise<void>((resolve, reject) => {
    rl.on('line', (line) => {
      try {
        const rec = JSON.parse(line) as Record<string, unknown>;
        logs.push(rec);
        if (rec['msg'] === 'listening') ports[String(rec['listener'])] = Number(rec['port']);
        if (ports['api'] && ports['otlp_http'] && ports['otlp_grpc']) resolve();
      } catch {
        /* non-JSON output is ignored */
      }
    });
    void exited.then((code) => reject(new Error(`server exited (${code}) before listening: ${stderr}`)));
    setTimeout(() => reject(new Error('server did not start in 30 s: ' + stderr)), 30_000).unref();
  });
  const p = { api: ports['api']!, otlpHttp: ports['otlp_http']!, otlpGrpc: ports['otlp_grpc']! };
  return {
    api: `http://127.0.0.1:${p.api}`,
    otlpHttp: `http://127.0.0.1:${p.otlpHttp}`,
    otlpGrpc: `127.0.0.1:${p.otlpGrpc}`,
    ports: p,
    dataDir: tmp.dir,
    child,
    logs,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const code = await exited;
      await drained;
      return code;
    },
    async kill() {
      if (child.exitCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
    cleanup: tmp.cleanup,
    cpuSeconds() {
      try {
        // Fields 14 and 15 of /proc/<pid>/stat (after the parenthesised name): utime, stime in clock ticks (100 Hz).
        const f = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
        return (Number(f[11]) + Number(f[12])) / 100;
      } catch {
        return 0;
      }
    },
    peakRss() {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        return m ? Number(m[1]) * 1024 : 0;
      } catch {
        return 0;
      }
    },
  };
}

/** The SVC_* settings of this process, and glibc's MALLOC_* tunables, so a benchmark run can configure the server it starts. */
export function serverEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => /^(SVC|MALLOC)_/.test(e[0]) && e[1] !== undefined));
}

/**
 * Runs `fn` against a fresh server as the ingest benchmarks configure it (SVC_* of this process on
 * top), then stops and removes it. The flush interval is the server's default, not the tests' 5 ms.
 */
export async function withBenchServer<T>(fn: (srv: ChildServer) => Promise<T>): Promise<T> {
  const srv = await startChildServer({ SVC_FLUSH_INTERVAL_MS: settingDefault('SVC_FLUSH_INTERVAL_MS'), ...serverEnv() });
  try {
    return await fn(srv);
  } finally {
    await srv.stop();
    srv.cleanup();
  }
}
