// The harness commands refuse a bad command line before sending anything (exit 2, USAGE), and
// `tds snapshot` sends the services of --service and --services alike.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../src/cli/main.js';

async function tds(args: string[]): Promise<{ code: number; out: any; sent: number; bodies: unknown[] }> {
  let out = '';
  let sent = 0;
  const bodies: unknown[] = [];
  const fetch = (async (_url: string, init?: RequestInit) => {
    sent++;
    bodies.push(typeof init?.body === 'string' ? JSON.parse(init.body) : init?.body);
    return new Response('{}', { status: 200 });
  }) as unknown as typeof globalThis.fetch;
  const code = await run(args, { stdout: { write: (s: string) => (out += s) }, stderr: { write: () => {} }, env: {}, fetch });
  return { code, out: JSON.parse(out), sent, bodies };
}

describe('harness commands: usage errors', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tds-usage-'));
  writeFileSync(join(dir, 'not-empty.txt'), 'x');
  const cases: [string[], RegExp][] = [
    [['snapshot', '/tmp/x'], /window is required/],
    [['snapshot', '--last', '1h', '--from-ts', '1767225600000000', '/tmp/x'], /cannot be combined/],
    [['snapshot', '--from-ts', '1767229200000000', '--to-ts', '1767225600000000', '/tmp/x'], /after --from-ts/],
    [['snapshot', '--last', '1h'], /no directory/],
    [['snapshot', '--last', '1h', dir], /not empty/],
    [['snapshot', '--last', '1h', 'a', 'b'], /unexpected argument/],
    [['snapshot', '--last', '1h', '--services', 'a,,b', '/tmp/x'], /empty name/],
    [['restore'], /no directory/],
    [['detect', '--as-of', '1767225600'], /looks like seconds/],
    [['detect', 'extra'], /unexpected argument/],
    [['replay', 'x', '--concurrency', '0'], /positive/],
    [['replay', 'x', '--otlp-url', 'ftp://h'], /invalid OTLP URL/],
  ];
  for (const [args, message] of cases) {
    it(`${args.join(' ')}`, async () => {
      const r = await tds(args);
      expect(r.code).toBe(2);
      expect(r.out.error.code).toBe('USAGE');
      expect(r.out.error.message).toMatch(message);
      expect(r.sent).toBe(0);
    });
  }
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
});

describe('tds snapshot --services', () => {
  it('sends the comma-separated names after those of --service', async () => {
    const r = await tds(['snapshot', '--from-ts', '1767225600000000', '--to-ts', '1767229200000000', '--service', 'web', '--services', 'checkout, payments', join(tmpdir(), 'tds-never-written')]);
    expect(r.sent).toBe(1);
    expect(r.bodies[0]).toEqual({ from_ts: 1767225600000000, to_ts: 1767229200000000, services: ['web', 'checkout', 'payments'] });
  });
});
