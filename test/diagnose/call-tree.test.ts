// The call-tree statement on a real store: with no span kinds or peer names, a span whose children
// are in one other service is a call to it, and a span with no children counts as a call when spans
// of its name under a parent of the same name always reach one other service (an unanswered call:
// a time-out, a refused connection), not as its service's own work. A name that reaches several
// services, and a service's entry spans, stay its own work.
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/db.js';
import { STATEMENTS } from '../../src/diagnose/reads/index.js';
import { callSequenceRow } from '../../src/diagnose/reads/call-tree-sql.js';
import { readRows } from '../../src/store/readers.js';
import { LOGS, LOG_TEMPLATES, SPANS } from '../../src/store/schema.js';
import { tempDir } from '../helpers/tmp.js';
import { FINE_BIN_US } from '../../src/core/time.js';

/** The call tree's reach from `lo`, read whole (no trace sample). */
const whole = (lo: number) => ({ lo, historyTo: lo, mid: lo, modHistory: 1, modRecent: 1 });
const T0 = 1_790_000_000_000_000;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

interface S {
  trace: string;
  id: string;
  parent: string | null;
  service: string;
  name: string;
  d: number;
}

describe('callTree', () => {
  it('counts an unanswered call as a call to the service its name always reaches', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const store = await openStore(t.dir);
    cleanups.push(() => store.close());
    const spans: S[] = [];
    for (let i = 0; i < 6; i++) {
      // GET /a calls payments through a client span named GET; GET /c calls payments and orders, both through GET.
      spans.push({ trace: `a${i}`, id: 'g', parent: null, service: 'gateway', name: 'GET /a', d: 30_000 });
      spans.push({ trace: `a${i}`, id: 'c', parent: 'g', service: 'gateway', name: 'GET', d: 20_000 });
      spans.push({ trace: `a${i}`, id: 'p', parent: 'c', service: 'payments', name: 'POST /charge', d: 19_000 });
      spans.push({ trace: `c${i}`, id: 'g', parent: null, service: 'gateway', name: 'GET /c', d: 30_000 });
      spans.push({ trace: `c${i}`, id: 'c1', parent: 'g', service: 'gateway', name: 'GET', d: 10_000 });
      spans.push({ trace: `c${i}`, id: 'p', parent: 'c1', service: 'payments', name: 'POST /charge', d: 9_000 });
      spans.push({ trace: `c${i}`, id: 'c2', parent: 'g', service: 'gateway', name: 'GET', d: 10_000 });
      spans.push({ trace: `c${i}`, id: 'o', parent: 'c2', service: 'orders', name: 'GET /orders', d: 9_000 });
    }
    for (let i = 0; i < 4; i++) {
      // Unanswered: timed out under GET /a (2 s, no child), and the same name under GET /c.
      spans.push({ trace: `x${i}`, id: 'g', parent: null, service: 'gateway', name: 'GET /a', d: 2_010_000 });
      spans.push({ trace: `x${i}`, id: 'c', parent: 'g', service: 'gateway', name: 'GET', d: 2_000_000 });
      spans.push({ trace: `y${i}`, id: 'g', parent: null, service: 'gateway', name: 'GET /c', d: 2_010_000 });
      spans.push({ trace: `y${i}`, id: 'c', parent: 'g', service: 'gateway', name: 'GET', d: 2_000_000 });
    }
    const values = spans.map((s, i) => `(make_timestamp(${T0 + i * 1000}), '${s.service}', '${s.trace}', '${s.id}', ${s.parent ? `'${s.parent}'` : 'NULL'}, '${s.name}', 0, ${s.d}, '${s.name}', false, '${s.service}-1')`);
    await store.writer.run(`INSERT INTO ${SPANS.name} (timestamp, service_name, trace_id, span_id, parent_span_id, span_name, status_code, duration_us, operation, is_error, k8s_pod_name) VALUES ${values.join(', ')}`);
    const rows = (await readRows(store.writer, STATEMENTS.callTree.sql(whole(T0 - FINE_BIN_US), T0 + 10 * FINE_BIN_US, FINE_BIN_US))).flatMap(STATEMENTS.callTree.decode);
    const sum = (f: (r: (typeof rows)[number]) => boolean) => rows.filter(f).reduce((a, r) => ({ n: a.n + r.n, kt: a.kt + r.kt }), { n: 0, kt: 0 });
    // To payments: 6 answered under GET /a, 6 under GET /c, and the 4 unanswered under GET /a (all slow).
    expect(sum((r) => r.service === 'gateway' && r.callee === 'payments')).toEqual({ n: 16, kt: 4 });
    expect(sum((r) => r.service === 'gateway' && r.callee === 'payments' && r.callee_pod === '')).toEqual({ n: 4, kt: 4 });
    expect(sum((r) => r.service === 'gateway' && r.callee === 'orders').n).toBe(6);
    // Own work: the 20 entry spans and the 4 unanswered GETs under GET /c, whose name reaches two services.
    expect(sum((r) => r.service === 'gateway' && r.callee === null).n).toBe(24);
    expect(sum((r) => r.service === 'gateway' && r.callee === null && r.entry).n).toBe(20);
    // The statement a diagnosis runs reads the call tree and the call sequences from one scan, and
    // returns the same rows as each statement alone.
    const args = [whole(T0 - FINE_BIN_US), T0 + 10 * FINE_BIN_US, FINE_BIN_US] as const;
    const both = (await readRows(store.writer, STATEMENTS.callStructure.sql(...args))).map(STATEMENTS.callStructure.decode);
    const sequences = (await readRows(store.writer, STATEMENTS.callSequences.sql(...args))).map(STATEMENTS.callSequences.decode);
    const sorted = (xs: unknown[]) => xs.map((x) => JSON.stringify(x)).sort();
    expect(sequences.length).toBeGreaterThan(0);
    expect(sorted(both.flatMap((r) => ('tree' in r ? r.tree : [])))).toEqual(sorted(rows));
    expect(sorted(both.flatMap((r) => ('seq' in r ? [r.seq] : [])))).toEqual(sorted(sequences));
  });
});

describe('callSequenceRow', () => {
  it('puts a request\'s calls in the order issued, the callee\'s start breaking ties, whatever order they were read in', () => {
    const call = (callee: string, issued: number, kt: number, answered: number) => ({ callee, issued, kt, answered });
    const row = { caller: 'gateway', seq_bin: 20, calls: [call('c', 30, 31, 40), call('b', 10, 12, 25), call('a', 10, 11, 15)] };
    expect(callSequenceRow(row)).toEqual({ caller: 'gateway', bin: 20, seq: ['a', 'b', 'c'], issued: [10, 10, 30], answered: [15, 25, 40] });
    expect(callSequenceRow({ caller: 'gateway', seq_bin: 20, calls: null })).toEqual({ caller: 'gateway', bin: 20, seq: [], issued: [], answered: [] });
  });
});

describe('templateBins', () => {
  it('counts log records per service, event and fine bin, a template that merged into another as that one', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const store = await openStore(t.dir);
    cleanups.push(() => store.close());
    // Template 5 merged into 7; 9 stands alone.
    await store.writer.run(
      `INSERT INTO ${LOG_TEMPLATES.name} (timestamp, service_name, template_id, pattern, first_seen, last_seen, count, error_count, merged_into) VALUES ` +
        `(make_timestamp(${T0}), 'payments', 5, 'a <*>', make_timestamp(${T0}), make_timestamp(${T0}), 1, 0, 7), ` +
        `(make_timestamp(${T0}), 'payments', 7, 'a <*> b', make_timestamp(${T0}), make_timestamp(${T0}), 2, 0, NULL), ` +
        `(make_timestamp(${T0}), 'orders', 9, 'c', make_timestamp(${T0}), make_timestamp(${T0}), 1, 0, NULL)`,
    );
    const logs: [number, string, number | null][] = [
      [T0 + 1, 'payments', 5],
      [T0 + 2, 'payments', 7],
      [T0 + FINE_BIN_US + 5, 'payments', 7],
      [T0 + 3, 'orders', 9],
      [T0 + 4, 'orders', null], // no template: not an event
      [T0 + 20 * FINE_BIN_US, 'orders', 9], // outside the range read
    ];
    await store.writer.run(`INSERT INTO ${LOGS.name} (timestamp, service_name, body, is_error, template_id) VALUES ${logs.map(([ts, s, tpl]) => `(make_timestamp(${ts}), '${s}', 'x', false, ${tpl ?? 'NULL'})`).join(', ')}`);
    const rows = (await readRows(store.writer, STATEMENTS.templateBins.sql(whole(T0), T0 + 10 * FINE_BIN_US, FINE_BIN_US))).map(STATEMENTS.templateBins.decode);
    expect(rows.sort((a, b) => a.template_id - b.template_id)).toEqual([
      { service_name: 'payments', template_id: 7, bins: [T0, T0 + FINE_BIN_US], n: [2, 1] },
      { service_name: 'orders', template_id: 9, bins: [T0], n: [1] },
    ]);
  });
});
