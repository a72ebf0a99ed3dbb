// A real PostgreSQL server for a test file: initdb in a temporary directory, started on a free port,
// stopped and removed afterwards. The binaries come from PATH or Debian's /usr/lib/postgresql/<v>/bin
// (.ci/run installs the `postgresql` package when neither has them). initdb and postgres refuse to
// run as root, so as root they run as the `postgres` user, in a directory that user owns.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

export interface Postgres {
  url: string;
  stop(): void;
}

function binDir(): string {
  for (const dir of (process.env['PATH'] ?? '').split(':')) if (dir && existsSync(join(dir, 'pg_ctl')) && existsSync(join(dir, 'initdb'))) return dir;
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base) ? readdirSync(base).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) if (existsSync(join(base, v, 'bin', 'pg_ctl'))) return join(base, v, 'bin');
  throw new Error('PostgreSQL binaries (initdb, pg_ctl) not found on PATH or under /usr/lib/postgresql: install them (Debian: apt-get install postgresql; .ci/run does)');
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export async function startPostgres(): Promise<Postgres> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'tds-pg-'));
  const data = join(dir, 'data');
  const asRoot = userInfo().uid === 0;
  const run = (cmd: string, args: string[]) =>
    execFileSync(asRoot ? 'runuser' : join(bin, cmd), asRoot ? ['-u', 'postgres', '--', join(bin, cmd), ...args] : args, { stdio: 'pipe', timeout: 60_000 });
  if (asRoot) {
    const { uid, gid } = { uid: Number(execFileSync('id', ['-u', 'postgres']).toString()), gid: Number(execFileSync('id', ['-g', 'postgres']).toString()) };
    chownSync(dir, uid, gid);
  }
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'tds', '--no-sync']);
  const port = await freePort();
  run('pg_ctl', ['-D', data, '-o', `-p ${port} -k ${dir} -h 127.0.0.1 -c fsync=off`, '-l', join(dir, 'log'), '-w', 'start']);
  return {
    url: `postgres://tds@127.0.0.1:${port}/postgres`,
    stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
