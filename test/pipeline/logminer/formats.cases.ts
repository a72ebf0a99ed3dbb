// Golden tests for real OpenTelemetry log bodies, run against each engine: JSON records, logfmt,
// multi-line stack traces, nginx/Apache access logs, PostgreSQL and Kubernetes component logs, lines
// that begin with a variable, merges and restarts. Every input here was written for this file.
// A "golden" case is lines that are one event (one template, the pattern given) next to lines that
// are another; the patterns are written by hand, not printed by the miner.
import { describe, expect, it } from 'vitest';
import { createMiner, FLAG_JSON, FLAG_NEW, type LogMiner, type TemplateRow } from '../../../src/pipeline/logminer/index.js';

export function formatsSuite(impl: 'wasm' | 'reference'): void {
  const make = (opts: { maxTemplatesPerService?: number } = {}): LogMiner => createMiner({ impl, ...opts });

  /** Mines `events` (each a list of lines of one event) shuffled together; checks one template per event with its pattern. */
  function golden(events: { pattern: string; lines: string[] }[]): LogMiner {
    const m = make();
    const lines: { e: number; line: string }[] = [];
    const longest = Math.max(...events.map((ev) => ev.lines.length));
    for (let i = 0; i < longest; i++) events.forEach((ev, e) => ev.lines[i] !== undefined && lines.push({ e, line: ev.lines[i]! }));
    const r = m.mineBatch('svc', lines.map((l) => l.line));
    const merged = new Map(r.evicted.filter((x) => x.merged_into !== null).map((x) => [x.template_id, x.merged_into!]));
    const idOf = (i: number): number => {
      let id = r.templateIds[i]!;
      while (merged.has(id)) id = merged.get(id)!;
      return id;
    };
    const byEvent = events.map(() => new Set<number>());
    lines.forEach((l, i) => byEvent[l.e]!.add(idOf(i)));
    events.forEach((ev, e) => {
      expect([...byEvent[e]!].length, `one template for: ${ev.pattern}`).toBe(1);
      expect(m.template([...byEvent[e]!][0]!)!.pattern).toBe(ev.pattern);
    });
    expect(new Set(byEvent.map((s) => [...s][0])).size, 'events stay apart').toBe(events.length);
    return m;
  }

  describe(`log formats (${impl}): lines that begin with a variable`, () => {
    it('host:port, IPs, IPv6 and domains in the first position never key the tree', () => {
      golden([
        {
          pattern: '<*>:<*> open through proxy <*>:<*> HTTPS',
          lines: [
            'db-7.internal.example.com:5432 open through proxy gw.example.net:3128 HTTPS',
            'api.example.org:443 open through proxy gw.example.net:3128 HTTPS',
            'cdn-3.static.example.io:443 open through proxy gw2.example.net:8080 HTTPS',
            '10.1.2.3:8443 open through proxy gw.example.net:3128 HTTPS',
            '[2001:db8::5]:443 open through proxy gw.example.net:3128 HTTPS',
          ],
        },
        {
          pattern: '<*>:<*> close, <*> bytes sent, <*> bytes received, lifetime <*>:<*>',
          lines: [
            'api.example.org:443 close, 1200 bytes sent, 300 bytes received, lifetime 00:02',
            'img.example.com:80 close, 0 bytes sent, 0 bytes received, lifetime 01:10',
            'search.example.co:443 close, 98 bytes sent, 1024 bytes received, lifetime 00:00',
          ],
        },
      ]);
    });

    it('a client IP, a quoted request line and key: value pairs: one event per method', () => {
      golden([
        {
          pattern: '<*> "GET <*> HTTP/<*>" status: <*> host: <*> agent: "<*>/<*>"',
          lines: [
            '10.0.0.5 "GET /api/v1/users/7 HTTP/1.1" status: 200 host: shop.example.com agent: "curl/7.68.0"',
            '10.0.0.6 "GET /healthz HTTP/1.1" status: 200 host: shop.example.com agent: "kube-probe/1.29"',
          ],
        },
        {
          pattern: '<*> "POST <*> HTTP/<*>" status: <*> host: <*> agent: "<*>"',
          lines: ['192.168.1.20 "POST /login HTTP/1.1" status: 302 host: www.example.org agent: "Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/121.0"'],
        },
        {
          pattern: '<*> "DELETE <*> HTTP/<*>" status: <*> host: <*> agent: "okhttp/<*>"',
          lines: ['172.16.4.4 "DELETE /api/v1/carts/99 HTTP/2.0" status: 204 host: shop.example.com agent: "okhttp/4.12.0"'],
        },
      ]);
    });
  });

  describe(`log formats (${impl}): nginx and Apache access logs`, () => {
    it('combined format: one template per method whatever the user, request, referrer or User-Agent', () => {
      golden([
        {
          pattern: '<*> - - [<*> <*>] "GET <*> HTTP/<*>" <*> <*> "<*>" "<*>"',
          lines: [
            '203.0.113.9 - - [05/Mar/2024:10:00:01 +0000] "GET /index.html HTTP/1.1" 200 5120 "-" "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36"',
            '203.0.113.10 - - [05/Mar/2024:10:00:02 +0000] "GET /static/app.js HTTP/2.0" 304 0 "https://shop.example.com/" "curl/8.5.0"',
            '198.51.100.7 - - [07/May/2024:00:00:00 +0200] "GET /search?q=shoes&page=2 HTTP/1.1" 200 20411 "-" "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X)"',
          ],
        },
        {
          // differs from the GET template in the method only, from its own in the user, referrer and agent
          pattern: '<*> - <*> [<*> <*>] "POST <*> HTTP/<*>" <*> <*> "<*>" "<*>"',
          lines: [
            '198.51.100.23 - alice [05/Mar/2024:10:00:02 +0000] "POST /api/orders HTTP/1.1" 201 87 "https://shop.example.com/cart" "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_3)"',
            '198.51.100.24 - - [05/Mar/2024:10:00:05 +0000] "POST /api/cart HTTP/1.1" 200 12 "-" "curl/8.5.0"',
          ],
        },
        {
          pattern: '<*> - bob [<*> <*>] "HEAD / HTTP/<*>" <*> <*> "-" "Wget/<*>"',
          lines: ['2001:db8::42 - bob [06/Apr/2024:23:59:59 -0700] "HEAD / HTTP/1.0" 404 153 "-" "Wget/1.21"'],
        },
      ]);
    });

    it('common log format and the nginx error log', () => {
      golden([
        {
          pattern: '<*> - <*> [<*> <*>] "GET <*> HTTP/<*>" <*> <*>',
          lines: [
            '127.0.0.1 - frank [10/Oct/2023:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326',
            '10.2.3.4 - - [11/Oct/2023:08:01:00 -0700] "GET /robots.txt HTTP/1.1" 404 209',
          ],
        },
        {
          pattern: '<*> - - [<*> <*>] "POST <*> HTTP/<*>" <*> <*>',
          lines: ['10.2.3.5 - - [11/Oct/2023:08:01:03 -0700] "POST /cgi-bin/form HTTP/1.1" 500 612'],
        },
        {
          pattern: '<*>/<*>/<*> <*>:<*>:<*> [error] <*>#<*>: <*> open() "<*>" failed (<*>: No such file or directory), client: <*>, server: <*>, request: "GET <*> HTTP/<*>", host: "<*>"',
          lines: [
            '2024/03/05 10:00:00 [error] 31#31: *7 open() "/usr/share/nginx/html/favicon.ico" failed (2: No such file or directory), client: 10.0.0.8, server: shop.example.com, request: "GET /favicon.ico HTTP/1.1", host: "shop.example.com"',
            '2024/03/05 10:02:11 [error] 31#31: *12 open() "/usr/share/nginx/html/old/page.html" failed (2: No such file or directory), client: 10.0.0.9, server: shop.example.com, request: "GET /old/page.html HTTP/1.1", host: "www.example.com"',
          ],
        },
      ]);
    });
  });

  describe(`log formats (${impl}): JSON records`, () => {
    it('mines the message field and keeps the other fields as parameters', () => {
      const m = make();
      const r = m.mineBatch('api', [
        '{"ts":"2024-03-05T10:00:00Z","level":"info","msg":"order 1042 placed by user 7","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"}',
        '{"level":"error","msg":"order 1043 placed by user 9","ts":"2024-03-05T10:00:01Z","region":"eu-west-1"}',
        ' {"message":"order 7 placed by user 12","severity":"INFO"} ',
        '{"log":"payment declined for card ending 4242\\n","stream":"stderr","time":"2024-03-05T10:00:02.5Z"}',
        '{"event":"payment declined for card ending 1881","logger":"billing"}',
      ], { withParams: true });
      expect(new Set([r.templateIds[0], r.templateIds[1], r.templateIds[2]]).size).toBe(1);
      expect(r.templateIds[3]).toBe(r.templateIds[4]);
      expect(r.templateIds[3]).not.toBe(r.templateIds[0]);
      expect(m.template(r.templateIds[0]!)!.pattern).toBe('order <*> placed by user <*>');
      expect(m.template(r.templateIds[3]!)!.pattern).toBe('payment declined for card ending <*>');
      expect(r.params![0]).toEqual(['1042', '7', 'ts=2024-03-05T10:00:00Z', 'level=info', 'trace_id=4bf92f3577b34da6a3ce929d0e0e4736']);
      expect(r.params![1]).toEqual(['1043', '9', 'level=error', 'ts=2024-03-05T10:00:01Z', 'region=eu-west-1']);
      for (let i = 0; i < 5; i++) expect(r.flags[i]! & FLAG_JSON, `line ${i}`).toBe(FLAG_JSON);
      // the example body is the record as it came
      expect(m.template(r.templateIds[3]!)!.example_body).toContain('"stream":"stderr"');
    });

    it('non-string messages, nested values and the field order do not matter', () => {
      const m = make();
      const r = m.mineBatch('api', [
        '{"msg":"cache miss for key user:42","ctx":{"shard":3,"tags":["a","b"]},"n":1.5,"ok":true,"x":null}',
        '{"n":2,"msg":"cache miss for key user:77"}',
        '{"msg":42}',
        '{"msg":""}',
      ], { withParams: true });
      expect(r.templateIds[0]).toBe(r.templateIds[1]);
      expect(r.params![0]).toEqual(['42', 'ctx={"shard":3,"tags":["a","b"]}', 'n=1.5', 'ok=true', 'x=null']);
      // not a string message: the record is templated on its shape
      expect(m.template(r.templateIds[2]!)!.pattern).toBe('{"msg":<*>}');
      expect(m.template(r.templateIds[3]!)!.pattern).toBe('{"msg":<*>}');
    });
  });

  describe(`log formats (${impl}): logfmt`, () => {
    it('mines msg and keeps the other pairs as parameters', () => {
      const m = golden([
        {
          pattern: 'request completed in <*>',
          lines: [
            'time=2024-03-05T10:00:00Z level=info msg="request completed in 12ms" method=GET path=/api/items status=200',
            'level=info time=2024-03-05T10:00:01Z msg="request completed in 340ms" method=POST path=/api/orders status=201 user=alice',
            'ts=2024-03-05T10:00:02.1Z lvl=warn msg="request completed in 2.5s" path=/slow',
          ],
        },
        {
          pattern: 'retrying upstream <*>:<*> after error',
          lines: ['level=warn msg="retrying upstream 10.0.0.3:9000 after error" attempt=1', 'level=warn msg="retrying upstream 10.0.0.4:9000 after error" attempt=2 err="connection refused"'],
        },
      ]);
      const r = m.mineBatch('svc', ['level=info msg="request completed in 5ms" err="a \\"quoted\\" reason" path=/x'], { withParams: true });
      expect(r.params![0]).toEqual(['5ms', 'level=info', 'err=a "quoted" reason', 'path=/x']);
    });

    it('a line that is only partly pairs is text', () => {
      const m = make();
      const r = m.mineBatch('svc', ['user=bob logged in from 10.0.0.1', 'user=eve logged in from 10.0.0.2'], { withParams: true });
      expect(r.templateIds[0]).toBe(r.templateIds[1]);
      expect(m.template(r.templateIds[0]!)!.pattern).toBe('user=<*> logged in from <*>');
    });
  });

  describe(`log formats (${impl}): multi-line stack traces`, () => {
    const java = (cls: string, frames: number): string =>
      `java.lang.${cls}: Cannot invoke "Order.total()" because "order" is null\n` +
      Array.from({ length: frames }, (_, i) => `\tat com.example.shop.Checkout.step${i}(Checkout.java:${40 + i})`).join('\n') +
      `\nCaused by: java.io.IOException: stream closed\n\t... ${frames} more`;
    const python = (exc: string, depth: number): string =>
      'Traceback (most recent call last):\n' +
      Array.from({ length: depth }, (_, i) => `  File "/app/worker.py", line ${10 + i}, in handle\n    result = step${i}(payload)`).join('\n') +
      `\n${exc}\n`;
    it('one record is one template, whatever its frames', () => {
      golden([
        { pattern: 'java.lang.NullPointerException: Cannot invoke "Order.total()" because "order" is null', lines: [java('NullPointerException', 3), java('NullPointerException', 40)] },
        { pattern: 'java.lang.IllegalStateException: Cannot invoke "Order.total()" because "order" is null', lines: [java('IllegalStateException', 1), java('IllegalStateException', 7)] },
        { pattern: "Traceback (most recent call last): KeyError: '<*>'", lines: [python("KeyError: 'user_id'", 1), python("KeyError: 'cart'", 12)] },
        { pattern: "Traceback (most recent call last): ValueError: invalid literal for int() with base <*>: '<*>'", lines: [python("ValueError: invalid literal for int() with base 10: 'abc'", 2), python("ValueError: invalid literal for int() with base 10: 'x1'", 5)] },
        {
          pattern: 'panic: runtime error: index out of range [<*>] with length <*>',
          lines: [
            'panic: runtime error: index out of range [5] with length 3\n\ngoroutine 1 [running]:\nmain.main()\n\t/tmp/x.go:8 +0x1d\nexit status 2',
            'panic: runtime error: index out of range [12] with length 4\n\ngoroutine 77 [running]:\nmain.worker(0xc000012345)\n\t/app/worker.go:31 +0x2f\ncreated by main.main\n\t/app/main.go:12 +0x5a',
          ],
        },
      ]);
    });

    it('keeps the frames as a parameter and the whole record as the example', () => {
      const m = make();
      const body = java('NullPointerException', 2);
      const r = m.mineBatch('svc', [body], { withParams: true });
      expect(r.params![0]![0]).toMatch(/^at com\.example\.shop\.Checkout\.step0/);
      expect(m.template(r.templateIds[0]!)!.example_body).toBe(body);
    });
  });

  describe(`log formats (${impl}): PostgreSQL`, () => {
    it('statements of any length are one value; messages stay apart', () => {
      const m = golden([
        {
          pattern: '<*> <*>:<*>:<*> UTC [<*>] LOG: duration: <*> ms statement: <*>',
          lines: [
            '2024-03-05 10:00:00.123 UTC [4242] LOG:  duration: 0.512 ms  statement: SELECT * FROM users WHERE id = 42',
            '2024-03-05 10:00:01.456 UTC [4243] LOG:  duration: 1204.9 ms  statement: UPDATE orders SET status = \'shipped\' WHERE id IN (1, 2, 3) AND region = \'eu\'',
            '2024-03-05 10:00:02.001 UTC [4250] LOG:  duration: 3.0 ms  statement: BEGIN',
          ],
        },
        {
          pattern: '<*> <*>:<*>:<*> UTC [<*>] ERROR: relation "<*>" does not exist at character <*>',
          lines: [
            '2024-03-05 10:00:03.000 UTC [4251] ERROR:  relation "user_sessions" does not exist at character 15',
            '2024-03-05 10:00:04.000 UTC [4252] ERROR:  relation "audit.events" does not exist at character 22',
          ],
        },
        {
          pattern: '<*> <*>:<*>:<*> UTC [<*>] LOG: connection authorized: user=<*> database=<*> application_name=<*>',
          lines: [
            '2024-03-05 10:00:05.000 UTC [4253] LOG:  connection authorized: user=app database=shop application_name=psql',
            '2024-03-05 10:00:06.000 UTC [4254] LOG:  connection authorized: user=report database=analytics application_name=metabase',
          ],
        },
        {
          pattern: '<*> <*>:<*>:<*> UTC [<*>] FATAL: password authentication failed for user "<*>"',
          lines: [
            '2024-03-05 10:00:07.000 UTC [4255] FATAL:  password authentication failed for user "admin"',
            '2024-03-05 10:00:08.000 UTC [4256] FATAL:  password authentication failed for user "postgres"',
          ],
        },
        {
          pattern: '<*> <*>:<*>:<*> UTC [<*>] STATEMENT: <*>',
          lines: ['2024-03-05 10:00:09.000 UTC [4257] STATEMENT:  SELECT 1 FROM t', '2024-03-05 10:00:10.000 UTC [4258] STATEMENT:  INSERT INTO audit (a, b) VALUES (1, 2)'],
        },
      ]);
      const r = m.mineBatch('svc', ['2024-03-05 10:00:11.000 UTC [4259] LOG:  duration: 2.5 ms  statement: DELETE FROM carts WHERE updated < now() - interval \'7 days\'  \n'], { withParams: true });
      expect(r.params![0]!.slice(-2)).toEqual(['2.5', "DELETE FROM carts WHERE updated < now() - interval '7 days'"]);
    });
  });

  describe(`log formats (${impl}): Kubernetes components`, () => {
    it('klog headers are dropped; structured klog mines its quoted message', () => {
      const m = golden([
        {
          pattern: 'Starting workers',
          lines: [
            'I0305 10:00:00.123456       1 controller.go:123] "Starting workers" controller="deployment" worker_count=5',
            'I0305 10:00:00.123999       1 controller.go:123] "Starting workers" controller="replicaset" worker_count=10',
          ],
        },
        {
          pattern: 'failed to list <*>: Get "https://<*>": dial tcp <*>:<*>: connect: connection refused',
          lines: [
            'E0305 10:01:00.000001    4711 reflector.go:138] failed to list *v1.Pod: Get "https://10.96.0.1:443/api/v1/pods?limit=500&resourceVersion=0": dial tcp 10.96.0.1:443: connect: connection refused',
            'E1231 23:59:59.999999      12 reflector.go:140] failed to list *v1.Node: Get "https://10.96.0.1:443/api/v1/nodes?limit=500": dial tcp 10.96.0.1:443: connect: connection refused',
          ],
        },
        {
          pattern: 'Successfully assigned shop/<*> to <*>',
          lines: [
            'W0305 10:02:00.500000       1 event.go:294] Successfully assigned shop/checkout-7d9f8b6c4-x2k9p to node-3.cluster.internal',
            'W0306 11:00:00.000000       1 event.go:294] Successfully assigned shop/cart-5c6d7e8f9-abcde to node-11.cluster.internal',
          ],
        },
      ]);
      const r = m.mineBatch('svc', ['I0305 10:00:00.123456       1 controller.go:123] "Starting workers" controller="job" worker_count=2'], { withParams: true });
      expect(r.params![0]).toEqual(['controller=job', 'worker_count=2']);
    });

    it('JSON component logs (kube --logging-format=json) mine msg', () => {
      golden([
        {
          pattern: 'Pod status updated',
          lines: [
            '{"ts":1709632800123.4,"caller":"status/status_manager.go:874","msg":"Pod status updated","pod":"shop/checkout-1","v":2}',
            '{"ts":1709632801000.9,"caller":"status/status_manager.go:874","msg":"Pod status updated","pod":"shop/cart-2","v":2,"extra":true}',
          ],
        },
      ]);
    });
  });

  describe(`log formats (${impl}): template ids`, () => {
    const corpus = [
      'db-1.example.com:5432 connection reset',
      'level=info msg="cache warmed in 12ms" keys=100',
      '{"msg":"user 7 signed in","level":"info"}',
      'java.lang.IllegalStateException: closed\n\tat a.B.c(B.java:1)',
      'said "hello there" to 10.0.0.1',
      '10.0.0.1 - - [05/Mar/2024:10:00:01 +0000] "GET / HTTP/1.1" 200 1 "-" "curl/8.5.0"',
      '2024-03-05 10:00:00.123 UTC [1] LOG:  duration: 1 ms  statement: SELECT 1',
      'I0305 10:00:00.123456       1 x.go:1] "Started" component="a"',
    ];

    it('stay the same across a restart, for every format', () => {
      const m1 = make();
      const r1 = m1.mineBatch('svc', corpus);
      const rows: TemplateRow[] = m1.drainDirty();
      const m2 = make();
      m2.restore(rows);
      const r2 = m2.mineBatch('svc', corpus);
      expect(Array.from(r2.templateIds)).toEqual(Array.from(r1.templateIds));
      expect(Array.from(r2.flags, (f) => f & FLAG_NEW)).toEqual(corpus.map(() => 0));
    });

    it('a template that gets more general keeps its id, and one it now covers merges into it (recorded)', () => {
      const m = make();
      const r = m.mineBatch('svc', [
        'fetch "curl/7.1" user j.doe ok', // template A
        'fetch "wget/1.2" user r.roe ok', // too far from A: template B
        'fetch "curl/7.2" user r.roe ok', // A: user <*>
        'fetch "wget/1.3" user j.doe ok', // B: user <*>
        'fetch "httpie/3.0" user j.doe ok', // A generalises its agent: now covers B, which merges into A
        'fetch "wget/9.1" user z.zed ok',
      ]);
      const [a, b] = [r.templateIds[0]!, r.templateIds[1]!];
      expect(a).not.toBe(b);
      expect(r.templateIds[4]).toBe(a);
      expect(r.templateIds[5]).toBe(a);
      expect(r.evicted.map((e) => [e.template_id, e.evicted, e.merged_into])).toEqual([[b, true, a]]);
      expect(m.template(a)).toMatchObject({ pattern: 'fetch "<*>/<*>" user <*> ok', count: 6 });
      expect(m.template(b)).toBeUndefined();
      // states are a few words, each its own event: never generalised, never merged
      const r2 = m.mineBatch('svc2', ['moved from NEW to READY', 'moved from READY to DONE', 'moved from NEW to DONE', 'moved from GONE to READY', 'moved from NEW to READY']);
      expect(new Set(r2.templateIds).size).toBe(4);
      expect(r2.templateIds[4]).toBe(r2.templateIds[0]);
      expect(Array.from(r2.templateIds.slice(0, 4), (id) => m.template(id)!.pattern)).toEqual([
        'moved from NEW to READY', 'moved from READY to DONE', 'moved from NEW to DONE', 'moved from GONE to READY',
      ]);
      expect(r2.evicted).toEqual([]);
    });
  });

  describe(`log formats (${impl}): malformed, truncated, oversized and hostile bodies`, () => {
    it('never throws, stays bounded and is stable', () => {
      const m = make();
      const bodies: (string | Uint8Array)[] = [
        '{"msg":"truncated', // truncated JSON: text
        '{"msg":"a","msg":"b"}', // duplicate key: the last wins, as JSON.parse has it
        '{"msg":"x"} trailing',
        '{"msg":' + '"y'.repeat(40000) + '"}', // oversized JSON: text
        '{"msg":"' + 'z '.repeat(20000) + '"}',
        '{"__proto__":{"polluted":1},"msg":"proto test"}',
        'level=info msg="unterminated',
        'msg= level= =x',
        'a=1 '.repeat(50000),
        '"'.repeat(5000),
        '" '.repeat(5000),
        'x="' + 'q '.repeat(2000) + '"',
        'I0305 10:00:00.123456       1 x.go:1] ',
        'Traceback (most recent call last):',
        'Traceback (most recent call last):\n\n\n',
        '\n\n\nonly later lines\nsecond',
        'line\n'.repeat(100000),
        'LOG:  statement: ',
        'statement: SELECT 1',
        new Uint8Array([0x7b, 0xff, 0x3d, 0x0a, 0x22, 0x80]), // '{', invalid UTF-8, '=', newline, quote
        new TextEncoder().encode('level=warn msg="from bytes 42" k=v'),
      ];
      const r = m.mineBatch('hostile', bodies, { withParams: true });
      expect(r.templateIds.length).toBe(bodies.length);
      for (const id of r.templateIds) expect(Number.isInteger(id) && id > 0).toBe(true);
      for (const p of r.params!) {
        expect(p.length).toBeLessThanOrEqual(16);
        for (const v of p) expect(v.length).toBeLessThanOrEqual(64);
      }
      expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
      expect(m.template(r.templateIds[20]!)!.pattern).toBe('from bytes <*>');
      expect(m.template(r.templateIds[15]!)!.pattern).toBe('only later lines');
      for (const id of r.templateIds) expect(m.template(id)!.pattern.length).toBeLessThan(20000);
      const r2 = m.mineBatch('hostile', bodies);
      expect(Array.from(r2.templateIds)).toEqual(Array.from(r.templateIds));
    });
  });
}
