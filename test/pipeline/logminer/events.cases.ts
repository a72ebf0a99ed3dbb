// Golden tests for the two ways a miner gets an event wrong, run against each engine: one event split
// because its variables took a different number of tokens, and different events merged because they
// differ in one constant word. Every input here was written for this file (messy on purpose: mixed
// units, lists, dates with and without a time); the expected patterns are written by hand.
import { describe, expect, it } from 'vitest';
import { createMiner, FLAG_NEW, type LogMiner, type MineBatchResult, type TemplateRow } from '../../../src/pipeline/logminer/index.js';
import { goldenEvents, resolverOf } from './golden-events.js';

export function eventsSuite(impl: 'wasm' | 'reference'): void {
  const make = (): LogMiner => createMiner({ impl });

  const resolver = resolverOf;
  const golden = (events: { pattern: string; lines: string[] }[], batch = 1000): LogMiner => goldenEvents(make, events, batch);

  describe(`log events (${impl}): a variable of varying length is one event`, () => {
    it('lists, durations and dates that take one token or several', () => {
      golden([
        {
          pattern: 'replicas <*>:<*> in sync after <*>',
          lines: [
            'replicas 10.0.0.1:5432 in sync after 12ms',
            'replicas 10.0.0.1:5432 10.0.0.2:5432 10.0.0.3:5432 in sync after 1.2s',
            'replicas 10.0.0.7:5432 10.0.0.9:5432 in sync after 3s',
            'replicas 10.0.1.4:5432 in sync after 40ms',
            'replicas 10.0.0.1:5432 10.0.0.2:5432 10.0.0.3:5432 10.0.0.4:5432 10.0.0.5:5432 in sync after 2m',
          ],
        },
        {
          pattern: 'worker uptime <*> <*> <*> , restarts <*>',
          lines: [
            'worker uptime 3d 4h 12m , restarts 0',
            'worker uptime 12m , restarts 2',
            'worker uptime 1h 5m , restarts 1',
            'worker uptime 40s , restarts 17',
          ],
        },
        {
          pattern: 'next backup of vol-<*> at <*> <*>:<*>:<*> (tz=UTC)',
          lines: [
            'next backup of vol-0a1b2c3d at 2024-03-05 10:00:00 (tz=UTC)',
            'next backup of vol-99ffee01 at 1709632800 (tz=UTC)',
            'next backup of vol-0a1b2c3d at 2024-03-06 10:00:00.250 (tz=UTC)',
          ],
        },
      ]);
    });

    it('an event seen first with one length keeps its id when it later comes with another', () => {
      const m = make();
      const r1 = m.mineBatch('svc', ['flushed 3 segments to 10.1.1.1 in 12 ms', 'flushed 5 segments to 10.1.1.2 in 3 ms']);
      const id = r1.templateIds[0]!;
      expect(r1.templateIds[1]).toBe(id);
      // later: the target as a list
      const r2 = m.mineBatch('svc', ['flushed 3 segments to 10.1.1.1 10.1.1.3 10.1.1.4 in 12 ms', 'flushed 7 segments to 10.1.1.9 in 1 ms']);
      expect(Array.from(r2.templateIds)).toEqual([id, id]);
      expect(Array.from(r2.flags)).toEqual([0, 0]);
      expect(m.template(id)).toMatchObject({ pattern: 'flushed <*> segments to <*> in <*> ms', count: 4 });
    });

    it('a line of another length maps its values to the template slots, run by run', () => {
      const m = make();
      m.mineBatch('svc', ['replicas 10.0.0.1 in sync after 12ms']);
      const r = m.mineBatch('svc', ['replicas 10.0.0.1 10.0.0.2 10.0.0.3 in sync after 3s'], { withParams: true });
      expect(r.params).toEqual([['10.0.0.1', '10.0.0.2', '10.0.0.3', '3s']]);
      const row = m.template(r.templateIds[0]!)!;
      expect(JSON.parse(row.sample_values!)).toEqual({ replicas: ['10.0.0.1', '10.0.0.2', '10.0.0.3'], after: ['12ms', '3s'] });
    });

    it('two templates of different lengths that become the same event merge, and the counts follow', () => {
      const m = make();
      const r = m.mineBatch('svc', [
        'copied 12 files to backup', // A
        'copied 3 4 files to archive', // B: another length, another word
        'copied 5 files to tmp-1', // A generalises: copied <*> files to <*>
        'copied 2 9 files to tmp-3', // B generalises: the same skeleton as A, so A merges into B
      ]);
      const [a, b] = [r.templateIds[0]!, r.templateIds[1]!];
      expect(a).not.toBe(b);
      expect(r.templateIds[2]).toBe(a);
      expect(r.templateIds[3]).toBe(b);
      expect(r.evicted.map((e) => [e.template_id, e.merged_into])).toEqual([[a, b]]);
      expect(m.template(b)).toMatchObject({ pattern: 'copied <*> <*> files to <*>', count: 4 });
      // and the next line of A's length goes to B
      expect(m.mineBatch('svc', ['copied 8 files to tmp-9']).templateIds[0]).toBe(b);
      // even one with a word where B has a variable (what A started with): B's runs take it
      const late = m.mineBatch('svc', ['copied 3 files to backup', 'copied 1 files to archive'], { withParams: true });
      expect(Array.from(late.templateIds)).toEqual([b, b]);
      expect(Array.from(late.flags, (f) => f & FLAG_NEW)).toEqual([0, 0]);
      expect(late.params![0]).toEqual(['3', 'backup']);
      expect(m.template(b)).toMatchObject({ pattern: 'copied <*> <*> files to <*>', count: 7 });
    });

    it('a late line of a retired length lands on the survivor after a restart too', () => {
      const first = ['copied 12 files to backup', 'copied 3 4 files to archive', 'copied 5 files to tmp-1', 'copied 2 9 files to tmp-3'];
      const m1 = make();
      const r1 = m1.mineBatch('svc', first);
      const b = r1.templateIds[1]!;
      const m2 = make();
      // stored as ingest upserts them: the latest row of an id wins (the merged one's last)
      m2.restore(new Map([...r1.changed, ...m1.drainDirty(), ...r1.evicted].map((row) => [row.template_id, row])).values());
      const r2 = m2.mineBatch('svc', ['copied 3 files to backup', 'copied 4 5 6 files to archive']);
      expect(Array.from(r2.templateIds)).toEqual([b, b]);
      expect(r2.changed).toEqual([]);
    });

    it('a phrase of several variable words (a quoted path with spaces, a list of ids) is one value', () => {
      golden([
        {
          pattern: 'uploaded "<*>" as obj-<*> for tenant <*>',
          lines: [
            'uploaded "/srv/share/My Documents/Q1 report.pdf" as obj-8f3a2c1e for tenant 42',
            'uploaded "/srv/share/a.txt" as obj-19ab77de for tenant 7',
            'uploaded "C:\\Users\\Jo Ann\\Desktop\\notes 2.txt" as obj-00ffee11 for tenant 42',
          ],
        },
        {
          pattern: 'job <*> waits on <*> <*> to finish',
          lines: ['job 8812 waits on 8810 8811 to finish', 'job 9 waits on 3 to finish', 'job 77 waits on 70 71 72 73 74 to finish'],
        },
      ]);
    });
  });

  describe(`log events (${impl}): a phrase of plain words that keeps changing is one variable`, () => {
    const errors = [
      'connect to db-1 failed: connection reset by peer',
      'connect to db-2 failed: no route to host',
      'connect to db-1 failed: connection refused',
      'connect to db-3 failed: broken pipe',
      'connect to db-1 failed: host is down',
      'connect to db-5 failed: network is unreachable',
      'connect to db-2 failed: connection reset by peer',
      'connect to db-4 failed: operation timed out',
      'connect to db-9 failed: the server closed the connection unexpectedly',
    ];

    it('error texts after a constant prefix join one template; a few repeated phrases next to them stay constants', () => {
      for (const batch of [1000, 1]) golden([
        { pattern: 'connect to db-<*> failed: <*>', lines: errors },
        // two values, each repeated: an enum, one event each
        { pattern: 'backup of vol-<*> finished: all files copied', lines: ['backup of vol-1 finished: all files copied', 'backup of vol-2 finished: all files copied', 'backup of vol-7 finished: all files copied'] },
        { pattern: 'backup of vol-<*> finished: nothing to do', lines: ['backup of vol-3 finished: nothing to do', 'backup of vol-1 finished: nothing to do'] },
        // a constant suffix around the phrase
        {
          pattern: 'task <*> aborted because <*> (will retry)',
          lines: [
            'task 17 aborted because the disk is full (will retry)',
            'task 18 aborted because quota exceeded (will retry)',
            'task 19 aborted because worker was lost (will retry)',
            'task 20 aborted because the lease expired (will retry)',
            'task 21 aborted because upstream said no (will retry)',
            'task 22 aborted because of a conflicting write (will retry)',
            'task 23 aborted because quota exceeded (will retry)',
          ],
        },
      ], batch);
    });

    it('a phrase needs two constant tokens around it, or a leading word alone: `Job <*> <phrase>` stays one event per phrase', () => {
      const m = make();
      const phrases = ['started', 'finished successfully', 'timed out after retries', 'was cancelled by the user', 'could not be scheduled anywhere', 'lost its lease to another node'];
      const r = m.mineBatch('svc', phrases.map((p, i) => `Job ${100 + i} ${p}`));
      expect(new Set(r.templateIds).size).toBe(phrases.length);
      expect(r.evicted).toEqual([]);
    });

    it('the merge keeps the oldest id, records the others as merged into it, and the phrase is one value', () => {
      const m = make();
      const r = m.mineBatch('svc', errors, { withParams: true });
      const first = r.templateIds[0]!;
      const resolve = resolver([r]);
      expect(new Set(Array.from(r.templateIds, resolve))).toEqual(new Set([first]));
      expect(r.evicted.length).toBeGreaterThan(3);
      expect(r.evicted.every((e) => e.merged_into === first)).toBe(true);
      expect(m.template(first)).toMatchObject({ pattern: 'connect to db-<*> failed: <*>', count: errors.length });
      expect(r.params![8]).toEqual(['9', 'the server closed the connection unexpectedly']);
      // and after a restart a new phrase joins it at once
      const m2 = make();
      m2.restore(m.drainDirty());
      const r2 = m2.mineBatch('svc', ['connect to db-3 failed: certificate has expired']);
      expect(Array.from(r2.templateIds)).toEqual([first]);
      expect(r2.flags[0]! & FLAG_NEW).toBe(0);
    });
  });

  describe(`log events (${impl}): a few constant words are different events`, () => {
    it('enum-like words next to real variables stay apart', () => {
      golden([
        { pattern: 'Job <*> Started on node-<*>', lines: ['Job 1842 Started on node-3', 'Job 1843 Started on node-1', 'Job 77 Started on node-3'] },
        { pattern: 'Job <*> Stopped on node-<*>', lines: ['Job 1842 Stopped on node-3', 'Job 12 Stopped on node-2'] },
        { pattern: 'Job <*> Paused on node-<*>', lines: ['Job 1843 Paused on node-1', 'Job 90 Paused on node-4', 'Job 91 Paused on node-4'] },
        { pattern: 'Took <*> s to create the volume vol-<*>', lines: ['Took 2.1 s to create the volume vol-7a', 'Took 0.4 s to create the volume vol-7c'] },
        { pattern: 'Took <*> s to delete the volume vol-<*>', lines: ['Took 1.9 s to delete the volume vol-7a', 'Took 12 s to delete the volume vol-01'] },
        { pattern: '<*> GET <*> <*> in <*>', lines: ['10.0.0.1 GET /api/users/42 200 in 12ms', '10.0.0.2 GET /api/users/7 404 in 3ms'] },
        { pattern: '<*> POST <*> <*> in <*>', lines: ['10.0.0.1 POST /api/users 201 in 30ms', '10.0.0.9 POST /api/orders 500 in 2s'] },
      ]);
    });

    it('quoted request lines with different methods are different events; the target stays a variable', () => {
      golden([
        {
          pattern: '<*> - <*> [<*> <*>] "GET <*> HTTP/<*>" <*> <*>',
          lines: [
            '192.0.2.10 - - [12/Jan/2025:08:00:01 +0100] "GET /catalog/item/7?ref=home HTTP/1.1" 200 5120',
            '192.0.2.11 - maria [12/Jan/2025:08:00:02 +0100] "GET / HTTP/2.0" 304 0',
            '198.51.100.3 - - [13/Jan/2025:23:59:59 +0100] "GET /static/css/site.min.css HTTP/1.1" 200 88211',
          ],
        },
        {
          pattern: '<*> - <*> [<*> <*>] "POST <*> HTTP/<*>" <*> <*>',
          lines: [
            '192.0.2.10 - - [12/Jan/2025:08:00:03 +0100] "POST /catalog/item/7/cart HTTP/1.1" 201 64',
            '203.0.113.50 - joe [12/Jan/2025:08:01:00 +0100] "POST /login HTTP/1.1" 302 0',
          ],
        },
        {
          pattern: '<*> - - [<*> <*>] "DELETE <*> HTTP/<*>" <*> <*>',
          lines: ['192.0.2.12 - - [12/Jan/2025:09:30:00 +0100] "DELETE /api/sessions/55 HTTP/1.1" 204 0'],
        },
        // a quoted request line after a key, and a quoted phrase that is no request line (one value)
        {
          pattern: 'upstream timed out, request: "PUT <*> HTTP/<*>", upstream: "http://<*>"',
          lines: [
            'upstream timed out, request: "PUT /files/report.csv HTTP/1.1", upstream: "http://10.0.3.2:8080/files/report.csv"',
            'upstream timed out, request: "PUT /files/a HTTP/1.0", upstream: "http://10.0.3.9:8080/files/a"',
          ],
        },
        {
          pattern: 'alert raised: "<*>" severity <*>',
          lines: ['alert raised: "disk 93% full on /data" severity 2', 'alert raised: "GET queue 40 behind" severity 3'],
        },
      ]);
    });

    it('request lines of two protocols: the generalised request line splits the same way after a restart', () => {
      const lines = ['10.0.0.1 "GET /a/1 HTTP/1.1" 200 served from cache', '10.0.0.2 "GET /a/2 RTSP/1.0" 200 served from cache', '10.0.0.3 "POST /a/2 HTTP/1.1" 201 served from cache'];
      const m1 = make();
      const r1 = m1.mineBatch('svc', lines);
      expect(m1.template(r1.templateIds[0]!)!.pattern).toBe('<*> "GET <*> <*>/<*>" <*> served from cache');
      const m2 = make();
      m2.restore(m1.drainDirty());
      const r2 = m2.mineBatch('svc', ['10.0.0.9 "GET /b HTTP/2.0" 304 served from cache', '10.0.0.9 "POST /b HTTP/2.0" 201 served from cache']);
      expect(Array.from(r2.templateIds)).toEqual([r1.templateIds[0], r1.templateIds[2]]);
      expect(r2.changed).toEqual([]);
    });

    it('a word position with many values is a variable: its templates merge into the first, ids and counts kept', () => {
      const m = make();
      const users = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'alice'];
      const r = m.mineBatch('svc', users.map((u, i) => `session opened for ${u} from 10.0.0.${i} via ssh`));
      const first = r.templateIds[0]!;
      const resolve = resolver([r]);
      expect(new Set(Array.from(r.templateIds, resolve))).toEqual(new Set([first]));
      expect(m.template(first)).toMatchObject({ pattern: 'session opened for <*> from <*> via ssh', count: 8 });
      // the splits were recorded while the position still looked enum-like
      const split = r.evicted.map((e) => e.split_from);
      expect(split).toEqual([first, first, first, first]);
    });

    it('records where a split came from', () => {
      const m = make();
      const r = m.mineBatch('svc', ['Job 1 Started', 'Job 2 Started now', 'Job 3 Stopped now']);
      const rows = new Map(m.drainDirty().map((row) => [row.template_id, row]));
      expect(rows.get(r.templateIds[1]!)!.split_from).toBeNull();
      expect(rows.get(r.templateIds[2]!)!.split_from).toBe(r.templateIds[1]);
    });
  });

  describe(`log events (${impl}): words in two positions, phrases after one word, phrases of one length`, () => {
    const moves = (from: string, to: string, ids: number[]) => ids.map((id) => `job ${id} moved from ${from} to ${to} by scheduler`);
    const renames = ['alpha beta', 'gamma delta', 'notes.txt notes-old.txt', 'draft final', 'q1 q2', 'old new', 'left right', 'alpha omega'].map(
      (pair, i) => `user ${i + 3} renamed file ${pair.split(' ')[0]} to ${pair.split(' ')[1]} in project main`,
    );

    it('a value that is no word where the split templates hold words makes the position a variable: they merge', () => {
      const m = make();
      const r = m.mineBatch('svc', renames.slice(0, 3));
      const [a, b] = [r.templateIds[0]!, r.templateIds[1]!];
      expect(a).not.toBe(b);
      expect(r.templateIds[2]).toBe(a);
      expect(r.evicted.map((e) => [e.template_id, e.merged_into, e.split_from])).toEqual([[b, a, a]]);
      expect(m.template(a)).toMatchObject({ pattern: 'user <*> renamed file <*> to <*> in project main', count: 3 });
    });

    it('two enum-like positions are constants, one event per combination; two positions that keep changing are variables', () => {
      for (const batch of [1000, 1]) golden([
        { pattern: 'job <*> moved from queued to running by scheduler', lines: moves('queued', 'running', [12, 16, 230, 7]) },
        { pattern: 'job <*> moved from running to done by scheduler', lines: moves('running', 'done', [13, 12, 99]) },
        { pattern: 'job <*> moved from running to failed by scheduler', lines: moves('running', 'failed', [14, 230]) },
        { pattern: 'job <*> moved from queued to cancelled by scheduler', lines: moves('queued', 'cancelled', [15, 8, 9]) },
        { pattern: 'user <*> renamed file <*> to <*> in project main', lines: renames },
      ], batch);
    });

    it('phrases of one length that similarity would join stay separate events while few', () => {
      const vol = (p: string, ids: number[]) => ids.map((id) => `sync of volume vol-${id} failed: ${p}`);
      golden([
        { pattern: 'sync of volume vol-<*> failed: disk is full', lines: vol('disk is full', [1, 2, 7, 1]) },
        { pattern: 'sync of volume vol-<*> failed: host is down', lines: vol('host is down', [3, 1]) },
        { pattern: 'sync of volume vol-<*> failed: quota is exceeded', lines: vol('quota is exceeded', [4, 5, 6]) },
        { pattern: 'sync of volume vol-<*> failed: peer not reachable', lines: vol('peer not reachable', [2, 9]) },
      ]);
    });

    it('a phrase after a single leading word is a variable once it keeps changing; few repeated ones stay events', () => {
      golden([
        {
          pattern: 'Starting <*>',
          lines: [
            'Starting metrics system',
            'Starting shuffle handler service',
            'Starting cleanup thread',
            'Starting the block scanner',
            'Starting web server on all interfaces',
            'Starting lease recovery monitor',
            'Starting metrics system',
            'Starting audit log writer',
          ],
        },
        { pattern: 'Shutdown complete', lines: ['Shutdown complete', 'Shutdown complete'] },
        { pattern: 'Shutdown requested by operator', lines: ['Shutdown requested by operator', 'Shutdown requested by operator'] },
      ]);
    });

    it('the merged phrase keeps the oldest id and takes new phrases of any length after a restart', () => {
      const lines = ['Starting metrics system', 'Starting shuffle handler service', 'Starting cleanup thread', 'Starting the block scanner', 'Starting web server on all interfaces', 'Starting lease recovery monitor'];
      const m1 = make();
      const r1 = m1.mineBatch('svc', lines);
      const first = r1.templateIds[0]!;
      expect(new Set(Array.from(r1.templateIds, resolver([r1])))).toEqual(new Set([first]));
      expect(r1.evicted.map((e) => e.merged_into)).toEqual([first, first, first, first]);
      const m2 = make();
      m2.restore(new Map([...r1.changed, ...m1.drainDirty(), ...r1.evicted].map((row) => [row.template_id, row])).values());
      const r2 = m2.mineBatch('svc', ['Starting job history server', 'Starting cleanup thread']);
      expect(Array.from(r2.templateIds)).toEqual([first, first]);
      expect(r2.changed).toEqual([]);
    });

    it('a split of a two-word combination records where it came from; the merge when the words turn variable too', () => {
      const m = make();
      // words only: each rename splits off until the sixth pair of words
      const wordRenames = ['alpha beta', 'gamma delta', 'draft final', 'old new', 'left right', 'red blue'].map((pair, i) => `user ${i} renamed file ${pair.replace(' ', ' to ')} in project main`);
      const r = m.mineBatch('svc', [...moves('queued', 'running', [1]), ...moves('running', 'done', [2]), ...wordRenames]);
      const rows = new Map(m.drainDirty().map((row) => [row.template_id, row]));
      expect(rows.get(r.templateIds[1]!)!.split_from).toBe(r.templateIds[0]);
      const renameFirst = r.templateIds[2]!;
      // the sixth rename turned both positions into variables: the five before merged into the first
      expect(r.evicted.map((e) => [e.merged_into, e.split_from])).toEqual([1, 2, 3, 4].map(() => [renameFirst, renameFirst]));
      expect(m.template(renameFirst)).toMatchObject({ pattern: 'user <*> renamed file <*> to <*> in project main', count: 6 });
    });
  });

  describe(`log events (${impl}): ids across a restart`, () => {
    const phase1 = [
      'replicas 10.0.0.1 in sync after 12ms',
      'Job 1842 Started on node-3',
      'Job 1842 Stopped on node-3',
      'session opened for alice from 10.0.0.1 via ssh',
      'session opened for bob from 10.0.0.2 via ssh',
      'session opened for carol from 10.0.0.3 via ssh',
      'copied 12 files to backup-0',
      'copied 3 4 files to archive',
      '10.0.0.1 - - [12/Jan/2025:08:00:01 +0100] "GET /a/1 HTTP/1.1" 200 12',
      '10.0.0.2 - - [12/Jan/2025:08:00:02 +0100] "POST /a/1 HTTP/1.1" 201 3',
      'job 1 moved from queued to running by scheduler',
      'job 2 moved from running to done by scheduler',
      'user 1 renamed file a to b in project main',
      'user 2 renamed file c to d in project main',
      'user 3 renamed file e to f in project main',
      'Starting metrics system',
      'Starting shuffle handler service',
      'Starting cleanup thread',
    ];
    const phase2 = [
      'replicas 10.0.0.1 10.0.0.2 in sync after 3s',
      'Job 9 Paused on node-1',
      'Job 10 Started on node-2',
      'session opened for dave from 10.0.0.4 via ssh',
      'session opened for erin from 10.0.0.5 via ssh',
      'session opened for frank from 10.0.0.6 via ssh',
      'copied 5 files to tmp-1',
      'copied 2 9 files to tmp-3',
      'copied 7 files to backup-0',
      'session opened for alice from 10.0.0.1 via ssh',
      'sync of /data failed: disk quota exceeded',
      'sync of /data failed: permission denied',
      'sync of /data failed: read only file system',
      'sync of /srv failed: no space left on device',
      'sync of /srv failed: permission denied',
      'sync of /srv failed: input or output error',
      'sync of /srv failed: stale handle',
      '10.0.0.3 - - [12/Jan/2025:08:00:03 +0100] "POST /b/2 HTTP/2.0" 201 4',
      '10.0.0.4 - - [12/Jan/2025:08:00:04 +0100] "PUT /b/2 HTTP/1.1" 200 5',
      '10.0.0.5 - - [12/Jan/2025:08:00:05 +0100] "GET /b/3 HTTP/1.1" 200 6',
      'job 3 moved from running to failed by scheduler',
      'job 4 moved from queued to running by scheduler',
      'job 5 moved from running to done by scheduler',
      'user 4 renamed file g to h in project main',
      'user 5 renamed file ij to kl in project main',
      'user 6 renamed file mn to op in project main',
      'Starting the block scanner',
      'Starting web server on all interfaces',
      'Starting lease recovery monitor',
      'Starting cleanup thread',
    ];

    it('a restart between two phases gives the same ids, splits and merges as no restart', () => {
      const straight = make();
      straight.mineBatch('svc', phase1);
      const want = straight.mineBatch('svc', phase2);

      const before = make();
      before.mineBatch('svc', phase1);
      const rows: TemplateRow[] = before.drainDirty();
      const after = make();
      after.restore(rows);
      const got = after.mineBatch('svc', phase2);
      expect(Array.from(got.templateIds)).toEqual(Array.from(want.templateIds));
      expect(Array.from(got.flags, (f) => f & FLAG_NEW)).toEqual(Array.from(want.flags, (f) => f & FLAG_NEW));
      const merges = (r: MineBatchResult) => r.evicted.map((e) => [e.template_id, e.merged_into]).sort((x, y) => x[0]! - y[0]!);
      expect(merges(got)).toEqual(merges(want));
      expect(merges(got).length).toBeGreaterThan(0);
    });

    it('the same lines again after a restart get the same ids and create nothing', () => {
      const m1 = make();
      const r1 = m1.mineBatch('svc', [...phase1, ...phase2]);
      const resolve = resolver([r1]);
      const m2 = make();
      m2.restore(m1.drainDirty());
      const r2 = m2.mineBatch('svc', [...phase1, ...phase2]);
      expect(Array.from(r2.templateIds)).toEqual(Array.from(r1.templateIds, resolve));
      expect(Array.from(r2.flags, (f) => f & FLAG_NEW).every((f) => f === 0)).toBe(true);
    });
  });
}
