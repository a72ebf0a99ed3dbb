// One behaviour suite for the log template miner, run against each engine (miner.wasm.test.ts,
// miner.reference.test.ts call it), in the spirit of hono's shared router cases.
import { describe, expect, it } from 'vitest';
import { createMiner, computeLogCounters, FLAG_CHANGED, FLAG_NEW, type LogMiner, type TemplateRow } from '../../../src/pipeline/logminer/index.js';
import { TLDS } from '../../../src/pipeline/logminer/mask.js';

export function minerSuite(impl: 'wasm' | 'reference'): void {
  const make = (opts: { maxTemplatesPerService?: number } = {}): LogMiner => createMiner({ impl, ...opts });
  const patternOf = (m: LogMiner, id: number): string => m.template(id)!.pattern;

  describe(`log miner (${impl}): masking`, () => {
    const cases: [string, string][] = [
      ['Received block blk_-1608999687919862906 of size 91178 from /10.250.10.6', 'Received block <*> of size <*> from <*>'],
      ['Connection from 10.1.2.3:5432 closed', 'Connection from <*>:<*> closed'],
      ['session 0x14ede63a5a70000 expired after 1500ms', 'session <*> expired after <*>'],
      ['request 3f2a1c9e-8b7d-4e6f-9a0b-1c2d3e4f5a6b done', 'request <*> done'],
      ['GET https://api.example.com/v1/users/42 returned 200', 'GET https://<*> returned <*>'],
      ['see http://wiki.apache.org/hadoop/NoRouteToHost for help', 'see http://wiki.apache.org/hadoop/NoRouteToHost for help'],
      ['mail to alice.smith@example.org bounced', 'mail to <*> bounced'],
      ['opened /var/log/app/server.log for writing', 'opened <*> for writing'],
      ['user=bob uid=1001 gid=100 shell=/bin/bash', 'user=bob uid=<*> gid=<*> shell=<*>'],
      ['Component State Change: Component (HWID=1973) ok', 'Component State Change: Component (HWID=<*>) ok'],
      ["Saved output of task 'attempt_201706092018_0024_m_000001_1' to disk", "Saved output of task '<*>' to disk"],
      ['generating core.2275 now', 'generating core.<*> now'],
      ['node node-246 is up since 2015-07-29 17:41:44,747', 'node node-<*> is up since <*> <*>:<*>:<*>,<*>'],
      ['jk2_init() Found child 6725 in scoreboard slot 10', 'jk2_init() Found child <*> in scoreboard slot <*>'],
      ['took 12.5ms (p99 3s) for 64KB', 'took <*> (p99 <*>) for <*>'],
      ['LOGIN chdir(/p/gb2/stella/RAPTOR/82086/2) failed', 'LOGIN chdir(<*>) failed'],
      ['Extract jar:file:/D:/hadoop/yarn/filecache/job.jar to /tmp/x', 'Extract jar:file:<*> to <*>'],
      ['hash 0246dd1c deadbeefcafe1234 ok', 'hash <*> <*> ok'],
      ['Retrying connect to server: msra-sa-41:8030. Already tried 3 time(s)', 'Retrying connect to server: <*>:<*>. Already tried <*> time(s)'],
      ['chrome.exe - proxy.cse.cuhk.edu.hk:5070 open through proxy', 'chrome.exe - <*>:<*> open through proxy'],
      ['Loaded C:\\Windows\\System32\\kernel32.dll ok', 'Loaded <*> ok'],
      ['Starting executor on host mesos-slave-13 with jetty-6.1.26', 'Starting executor on host <*> with jetty-<*>'],
      ['worker17 restarted on web01 via jk2 and x509', '<*> restarted on <*> via jk2 and x509'],
      ['commit abc1234 deployed by deadbeef to cafe', 'commit <*> deployed by deadbeef to cafe'],
      // variables by what they are, wherever they stand
      ['db-7.internal.example.com:5432 connection reset', '<*>:<*> connection reset'],
      ['cache.example.net ready after warm-up', '<*> ready after warm-up'],
      ['peer fe80::1ff:fe23:4567:890a joined', 'peer <*> joined'],
      ['listening on [::1]:8080 now', 'listening on [<*>]:<*> now'],
      ['listening on [2001:db8::7]:443 now', 'listening on [<*>]:<*> now'],
      ['link 00:1a:2b:3c:4d:5e up', 'link <*> up'],
      ['at [10/Oct/2023:13:55:36 +0000] done', 'at [<*> <*>] done'],
      ['expires 05-Mar-2024 today', 'expires <*> today'],
      ['note msg="disk is 91% full" code=7', 'note msg="<*>" code=<*>'],
      ['said "hello there" twice', 'said "hello there" twice'],
      ['ua "Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101" seen', 'ua "<*>" seen'],
      ['open "unterminated quote with 42 words', 'open "unterminated quote with <*> words'],
      // kept: code and file names are not hosts, a month needs digits around it
      ['loaded org.apache.hadoop.Foo and chrome.exe from Mar', 'loaded org.apache.hadoop.Foo and chrome.exe from Mar'],
    ];
    for (const [line, want] of cases) {
      it(`masks: ${line}`, () => {
        const m = make();
        const r = m.mineBatch('svc', [line]);
        expect(patternOf(m, r.templateIds[0]!)).toBe(want);
      });
    }
  });

  it(`masks a host name in every known top-level domain, and no other (${impl})`, () => {
    const m = make();
    for (const tld of TLDS) expect(patternOf(m, m.mineBatch(tld, [`api-2.example.${tld} up`]).templateIds[0]!), tld).toBe('<*> up');
    for (const other of ['exe', 'log', 'json', 'py', 'md', 'txt', 'Com', 'java']) {
      expect(patternOf(m, m.mineBatch(other, [`x.${other} up`]).templateIds[0]!), other).toBe(`x.${other} up`);
    }
  });

  describe(`log miner (${impl}): tree matching`, () => {
    it('groups lines that differ in variables and generalises the differing token', () => {
      const m = make();
      const r = m.mineBatch('sshd', [
        'Invalid user web-master from 173.234.31.186',
        'Invalid user test_1 from 52.80.34.196',
        'Invalid user admin.ops from 103.99.0.122',
      ]);
      expect(new Set(r.templateIds).size).toBe(1);
      expect(patternOf(m, r.templateIds[0]!)).toBe('Invalid user <*> from <*>');
      expect(Array.from(r.flags)).toEqual([FLAG_NEW, FLAG_CHANGED, 0]);
      expect(r.changed.map((c) => c.template_id)).toEqual([r.templateIds[0]]);
    });

    it('keeps a plain word that differs as a constant until the position has held more than five', () => {
      const m = make();
      const users = ['webmaster', 'test', 'admin', 'oracle', 'guest', 'ftpuser', 'admin'];
      const r = m.mineBatch('sshd', users.map((u, i) => `Invalid user ${u} from 10.0.0.${i}`));
      const first = r.templateIds[0]!;
      // five words: five templates (an enum-like position); the sixth word makes it a variable
      expect(new Set(Array.from(r.templateIds.slice(0, 5))).size).toBe(5);
      expect(r.templateIds[5]).toBe(first);
      expect(r.templateIds[6]).toBe(first);
      expect(patternOf(m, first)).toBe('Invalid user <*> from <*>');
      // the other four merged into the first, which keeps its id and their counts
      expect(r.evicted.map((e) => e.merged_into)).toEqual([first, first, first, first]);
      expect(r.evicted.map((e) => e.template_id).sort()).toEqual(Array.from(r.templateIds.slice(1, 5)).sort());
      expect(m.template(first)!.count).toBe(7);
    });

    it('keeps messages with different constant words apart', () => {
      const m = make();
      const r = m.mineBatch('sshd', [
        'Received disconnect from 1.2.3.4: 11: Bye Bye [preauth]',
        'Received disconnect from 1.2.3.5: 11: Closed due to user request. [preauth]',
        'Received disconnect from 1.2.3.6: 11: disconnected by user',
        'Received disconnect from 1.2.3.7: 11: Bye Bye [preauth]',
      ]);
      expect(r.templateIds[0]).toBe(r.templateIds[3]);
      expect(new Set(r.templateIds).size).toBe(3);
    });

    it('generalises key=value tokens to their common prefix', () => {
      const m = make();
      const r = m.mineBatch('pam', [
        'authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=ns.example.com user=root',
        'authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=ns.other.net user=guest',
      ]);
      expect(r.templateIds[0]).toBe(r.templateIds[1]);
      expect(patternOf(m, r.templateIds[0]!)).toBe(
        'authentication failure; logname= uid=<*> euid=<*> tty=ssh ruser= rhost=<*> user=<*>',
      );
    });

    it('extracts parameters and numeric values', () => {
      const m = make();
      const r = m.mineBatch('app', ['request took 12ms status=200 user j.doe', 'request took 30ms status=500 user r.roe'], { withParams: true });
      // the first line cannot know yet that 'j.doe' is a variable; the second one generalises it
      expect(r.params).toEqual([['12ms', '200'], ['30ms', '500', 'r.roe']]);
      const row = m.template(r.templateIds[0]!)!;
      expect(JSON.parse(row.sample_values!)).toEqual({ took: ['12ms', '30ms'], status: ['200', '500'], user: ['r.roe'] });
    });
  });

  describe(`log miner (${impl}): encoding`, () => {
    it('gives the same ids and parameters for ASCII, non-ASCII, byte and mixed batches', () => {
      const lines = ['café 12 servi à 3 clients', 'plain 7 line', 'café 13 servi à 4 clients', 'plain 8 line'];
      const a = make().mineBatch('s', lines, { withParams: true });
      const b = make().mineBatch('s', lines.map((l) => new TextEncoder().encode(l)), { withParams: true });
      const c = make();
      const c1 = c.mineBatch('s', lines.slice(0, 2), { withParams: true });
      const c2 = c.mineBatch('s', lines.slice(2), { withParams: true });
      expect(b.params).toEqual(a.params);
      expect(Array.from(b.templateIds)).toEqual(Array.from(a.templateIds));
      expect([...c1.params!, ...c2.params!]).toEqual(a.params);
      expect(a.params![2]).toEqual(['13', '4']);
    });
    it('writes each line\'s parameters as JSON text equal to JSON.stringify of them', () => {
      // ASCII values take the byte path, the others the string path: escapes, cuts and mixes of both
      const lines = [
        'job 12 said "hi\\there" tab\tend code=\u0001x',
        'job 13 said "a" tab\tend code=\u0002y',
        'job 14 said café tab\tend code=ü',
        `job 15 said ${'x'.repeat(100)} tab\tend code=${'é'.repeat(70)}`,
        `job 16 said ${'😀'.repeat(40)} tab\tend code=${'a'.repeat(63)}😀`,
        'no variables here at all',
        'ping 1 from 10.0.0.1:77 x\u0007y\u001fz\u007f"q',
        'ping 2 from 10.0.0.2:78 a\u0008b\u000cc\rd',
        'ping 3 from 10.0.0.3:79 more\u0010than',
        'ping 4 from 10.0.0.4:80 few\u0003words',
        'said "a\u0007b 12\u001f" ok',
        'said "c\u0008d 13\u000c\u007f" ok',
        '{"msg":"user 42 logged in","level":"info","ip":"10.0.0.1"}',
        'level=warn msg="disk 91% full" path=/var/lib/x',
        '\u0000\u0001 null 12 \ud800 lone 13',
      ];
      const m = make();
      for (let round = 0; round < 2; round++) {
        const r = m.mineBatch('p', lines, { withParams: true, withParamsJson: true });
        expect(r.paramsJson).toEqual(r.params!.map((p) => (p.length ? JSON.stringify(p) : null)));
        expect(r.paramsJson!.filter((j) => j === null).length).toBeGreaterThan(0);
      }
    });
  });

  describe(`log miner (${impl}): structured bodies`, () => {
    it('templates a JSON object without a message field on its keys and shape', () => {
      const m = make();
      const r = m.mineBatch('api', [
        '{"level":"info","op":"login","user":{"id":42,"name":"a"},"tags":["x","y"]}',
        ' {"level":"warn","op":"logout","user":{"id":7,"name":"b"},"tags":[]} ',
        '{"op":"login","level":"info"}',
      ], { withParams: true });
      expect(r.templateIds[0]).toBe(r.templateIds[1]);
      expect(r.templateIds[2]).not.toBe(r.templateIds[0]);
      expect(patternOf(m, r.templateIds[0]!)).toBe('{"level":<*>,"op":<*>,"user":{"id":<*>,"name":<*>},"tags":[<*>]}');
      expect(r.params![0]).toEqual(['info', 'login', '42', 'a', '["x","y"]']);
      const row = m.template(r.templateIds[0]!)!;
      expect(Object.keys(JSON.parse(row.sample_values!))).toEqual(['level', 'op', 'user.id', 'user.name', 'tags']);
    });

    it('mines invalid JSON as text', () => {
      const m = make();
      const r = m.mineBatch('api', ['{not json at all 42}']);
      expect(patternOf(m, r.templateIds[0]!)).toBe('{not json at all <*>}');
    });
  });

  describe(`log miner (${impl}): services, restore, eviction`, () => {
    it('never shares a template between services', () => {
      const m = make();
      const a = m.mineBatch('checkout', ['payment 42 failed', 'payment 43 failed']);
      const b = m.mineBatch('cart', ['payment 44 failed']);
      expect(a.templateIds[0]).toBe(a.templateIds[1]);
      expect(b.templateIds[0]).not.toBe(a.templateIds[0]);
      expect(m.template(b.templateIds[0]!)!.service_name).toBe('cart');
      expect(m.template(a.templateIds[0]!)!.count).toBe(2);
    });

    it('restores from svc_log_templates rows: same ids, new ids above all stored ones', () => {
      const m1 = make();
      const lines = ['disk /dev/sda1 is 91% full', 'worker 3 started', 'worker 4 started', '{"kind":"x","n":1}'];
      const r1 = m1.mineBatch('node', lines);
      const rows: TemplateRow[] = [...m1.drainDirty(), { ...m1.template(r1.templateIds[0]!)!, template_id: 900, pattern: 'gone <*>', evicted: true }];
      const m2 = make();
      m2.restore(rows);
      const r2 = m2.mineBatch('node', ['disk /dev/sdb2 is 12% full', 'worker 9 started', '{"kind":"y","n":2}']);
      expect(Array.from(r2.templateIds)).toEqual([r1.templateIds[0], r1.templateIds[1], r1.templateIds[3]]);
      expect(Array.from(r2.flags, (f) => f & (FLAG_NEW | FLAG_CHANGED))).toEqual([0, 0, 0]);
      expect(m2.template(r1.templateIds[1]!)!.count).toBe(3);
      const r3 = m2.mineBatch('node', ['something else entirely']);
      expect(r3.templateIds[0]).toBe(901);
    });

    it('evicts the least recently used template beyond the cap and never reuses an id', () => {
      const m = make({ maxTemplatesPerService: 3 });
      const seen = new Set<number>();
      const evicted = new Set<number>();
      for (let i = 0; i < 20; i++) {
        const kind = `kind${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`; // distinct constant words
        const r = m.mineBatch('svc', [`alpha ${i}`, `${kind} event happened`, `${kind} event happened`]);
        for (const id of r.templateIds) {
          expect(evicted.has(id)).toBe(false);
          seen.add(id);
        }
        for (const e of r.evicted) {
          expect(e.evicted).toBe(true);
          evicted.add(e.template_id);
        }
        expect(m.liveCount('svc')).toBeLessThanOrEqual(3);
      }
      // 'alpha <*>' is used in every batch, so it is never the least recently used
      expect(m.templates('svc').some((t) => t.pattern === 'alpha <*>')).toBe(true);
      expect(evicted.size).toBeGreaterThan(10);
      expect(Math.max(...seen)).toBe(m.nextTemplateId() - 1);
    });

    it('bounds the templates sharing one leaf, so a flood of unique lines cannot stall mining', () => {
      const m = make();
      // (names joined by '_': a phrase of plain words would be one variable, events.cases.ts)
      const bodies = Array.from({ length: 300 }, (_, i) => `event ${'abcdefghij'[i % 10]}${String.fromCharCode(97 + ((i * 7) % 26))}_x_${'klmnop'[i % 6]} q${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + ((i >> 3) % 26))} z`);
      const r = m.mineBatch('flood', bodies);
      expect(m.liveCount('flood')).toBeLessThanOrEqual(64);
      const ids = new Set(r.templateIds);
      for (const e of r.evicted) expect(e.evicted).toBe(true);
      expect(ids.size).toBeGreaterThan(64);
    });

    it('keeps evicted ids retired across a restore', () => {
      const m = make({ maxTemplatesPerService: 2 });
      const rows = new Map<number, TemplateRow>();
      for (let i = 0; i < 6; i++) {
        const r = m.mineBatch('svc', [`type${i} thing`]);
        for (const c of [...r.changed, ...r.evicted]) rows.set(c.template_id, c);
      }
      const m2 = make({ maxTemplatesPerService: 2 });
      m2.restore(rows.values());
      const r = m2.mineBatch('svc', ['type0 thing']);
      expect(r.flags[0]! & FLAG_NEW).toBe(FLAG_NEW);
      expect(r.templateIds[0]).toBe(7);
    });
  });

  describe(`log miner (${impl}): counters`, () => {
    it('computes log_counters with pinned_zero for a counter that stopped moving', () => {
      const m = make();
      const lines: string[] = [];
      for (let i = 0; i < 10; i++) lines.push(`processed ${10 + i} records in ${5 + i} ms`);
      for (let i = 0; i < 6; i++) lines.push(`processed 0 records in ${5 + i} ms`);
      m.mineBatch('etl', lines);
      const counters = m.logCounters('etl');
      const processed = counters.find((c) => c.label === 'processed')!;
      expect(processed).toMatchObject({ samples: 16, min_value: 0, max_value: 19, pinned_zero: true, pattern: 'processed <*> records in <*> ms' });
      const inMs = counters.find((c) => c.label === 'in')!;
      expect(inMs.pinned_zero).toBe(false);
      expect(inMs.avg_value).toBeCloseTo((5 + 6 + 7 + 8 + 9 + 10 + 11 + 12 + 13 + 14 + 5 + 6 + 7 + 8 + 9 + 10) / 16);
      expect(computeLogCounters([])).toEqual([]);
    });

    it('counts errors and keeps the severity and example body', () => {
      const m = make();
      const r = m.mineBatch('svc', ['db timeout after 30s', 'db timeout after 31s'], {
        severityTexts: ['ERROR', 'WARN'], timestampsUs: [1_700_000_000_000_000, 1_700_000_001_000_000],
      });
      const row = m.template(r.templateIds[0]!)!;
      expect(row).toMatchObject({ count: 2, error_count: 1, severity_text: 'ERROR', example_body: 'db timeout after 30s' });
      expect(row.first_seen).toBe(1_700_000_000_000_000);
      expect(row.last_seen).toBe(1_700_000_001_000_000);
    });
  });

  describe(`log miner (${impl}): pathological lines`, () => {
    it('handles 1 MB, 10,000-token, binary, invalid UTF-8, empty and deeply nested lines', () => {
      const m = make();
      const bin = new Uint8Array(70000);
      for (let i = 0; i < bin.length; i++) bin[i] = (i * 7919 + 13) & 0xff;
      const bodies: (string | Uint8Array)[] = [
        'x'.repeat(1 << 20),
        'y '.repeat(1 << 19),
        Array.from({ length: 10000 }, (_, i) => `tok${i % 7} ${i}`).join(' '),
        bin,
        new Uint8Array([0xff, 0xfe, 0x80, 0x20, 0xc3, 0x28, 0x20, 0xe2, 0x82]),
        '',
        '   ',
        '{"a":' + '['.repeat(20000) + ']'.repeat(20000) + '}',
        '{"a":{"b":{"c":{"d":{"e":{"f":1}}}}}}',
        '{' + '"k":1,'.repeat(5000) + '"z":2}',
        '\u0000\u0001\u0002 null bytes \ud800 lone surrogate',
      ];
      const r = m.mineBatch('weird', bodies, { withParams: true });
      expect(r.templateIds.length).toBe(bodies.length);
      for (const id of r.templateIds) expect(Number.isInteger(id) && id > 0).toBe(true);
      for (const p of r.params!) {
        expect(p.length).toBeLessThanOrEqual(16);
        for (const v of p) expect(v.length).toBeLessThanOrEqual(64);
      }
      expect(patternOf(m, r.templateIds[1]!).split(' ').length).toBe(129);
      expect(patternOf(m, r.templateIds[8]!)).toBe('{"a":{"b":{"c":{"d":<*>}}}}');
      expect(m.template(r.templateIds[0]!)!.example_body!.length).toBeLessThanOrEqual(1024);
      // mining the same lines again is stable
      const r2 = m.mineBatch('weird', bodies);
      expect(Array.from(r2.templateIds)).toEqual(Array.from(r.templateIds));
    });
  });
}
