// The tds CLI against the real server: each command's JSON output and exit code, the client-side
// full-scan refusal and its override, and the built binary on the PATH-less `node dist/...` route.
import { beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { run } from '../../src/cli/main.js';
import { PACKAGE_ROOT } from '../../src/core/paths.js';
import { useTestServer } from '../helpers/server.js';
import { postOtlp } from '../helpers/otlp.js';
import { tracesJson } from '../../testkit/otlp-json.js';

const srv = useTestServer();
const now = Date.now() * 1000;

beforeAll(async () => {
  const spans = Array.from({ length: 5 }, (_v, i) => ({ name: 'GET /items', startUs: now - 60_000_000 + i, durationUs: 1000 + i, error: i === 0 }));
  expect((await postOtlp(srv.otlpHttp, 'traces', tracesJson('cli-svc', spans))).status).toBe(200);
});

async function tds(...argv: string[]): Promise<{ code: number; out: any; stdout: string }> {
  let stdout = '';
  const code = await run(argv, {
    stdout: { write: (s: string) => void (stdout += s) },
    stderr: { write: () => {} },
    env: { SVC_URL: srv.api },
  } as never);
  return { code, out: JSON.parse(stdout), stdout };
}

describe('tds against the real server', () => {
  it('healthcheck exits 0 when ready, 1 when nothing listens', async () => {
    const ok = await tds('healthcheck');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^{\n {2}"/); // indented JSON
    const down = await tds('--url', 'http://127.0.0.1:1', 'healthcheck');
    expect(down.code).toBe(1);
    expect(down.out.error.code).toBeTypeOf('string');
  });

  it('status prints /admin/status', async () => {
    const r = await tds('status');
    expect(r.code).toBe(0);
    expect(r.out.status.ingest.rowsCommitted).toBeGreaterThanOrEqual(5);
  });

  it('query: a bounded statement answers rows; an unbounded one is refused before sending unless --full-scan', async () => {
    const bounded = await tds('query', `SELECT count(*) AS n, count_if(is_error) AS errors FROM svc_spans WHERE timestamp >= TIMESTAMP '2000-01-01 00:00:00' AND service_name = 'cli-svc'`);
    expect(bounded.code).toBe(0);
    expect(bounded.out).toEqual([{ n: 5, errors: 1 }]);
    const refused = await tds('query', `SELECT count(*) AS n FROM svc_spans WHERE service_name = 'cli-svc'`);
    expect(refused.code).toBe(1);
    expect(refused.out.error.code).toBe('FULL_SCAN_REFUSED');
    const forced = await tds('query', '--full-scan', `SELECT count(*) AS n FROM svc_spans WHERE service_name = 'cli-svc'`);
    expect(forced.code).toBe(0);
    expect(forced.out).toEqual([{ n: 5 }]);
  });

  it('query: the server guard answers through the CLI with its code and hint', async () => {
    const r = await tds('query', '--full-scan', `SELECT * FROM read_csv('/etc/passwd')`);
    expect(r.code).toBe(1);
    expect(r.out.error.code).toBe('FUNCTION_NOT_ALLOWED');
    expect(r.out.error.hint.length).toBeGreaterThan(0);
  });

  it('anomalies answers the spec shape; diagnose and investigate answer a block per service and an error for an unknown one', async () => {
    const a = await tds('anomalies', '--service', 'cli-svc');
    expect(a.code).toBe(0);
    expect(a.out).toEqual({ anomalies: [], truncated: false });
    for (const cmd of ['diagnose', 'investigate']) {
      const d = await tds(cmd, '--service', 'cli-svc', '--service', 'no-such-svc', '--last', '30m');
      expect(d.code).toBe(0);
      expect(d.out.results['cli-svc'].coverage.span_count).toBe(5);
      expect(d.out.results['cli-svc'].window.to_ts - d.out.results['cli-svc'].window.from_ts).toBe(30 * 60 * 1_000_000);
      expect(d.out.errors['no-such-svc']).toMatch(/no telemetry from 'no-such-svc'/);
    }
  });

  it('the built binary prints indented JSON and exits by success', async () => {
    const exec = promisify(execFile);
    const bin = join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js');
    const { stdout } = await exec(bin, ['healthcheck'], { env: { ...process.env, SVC_URL: srv.api } });
    expect(JSON.parse(stdout)).toMatchObject({ ready: true });
    await expect(exec(bin, ['query', 'SELECT 1 FROM svc_spans'], { env: { ...process.env, SVC_URL: srv.api } })).rejects.toMatchObject({ code: 1 });
    const ext = await exec(bin, ['fetch-extensions']);
    expect(JSON.parse(ext.stdout).ok).toBe(true);
  });
});
