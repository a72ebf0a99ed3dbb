// The causal walk (evidence/operations.ts) and what changed (evidence/changes.ts), ranked, as pure
// functions: hand-built window and baseline rows for a chain gateway → cart → stock (+ a database
// and a noisy neighbour), one fault at a time.
import { describe, expect, it } from 'vitest';
import { applyExceedances, buildModel, latencyCandidates } from '../../src/diagnose/model.js';
import { severityOf, type Finding } from '../../src/diagnose/findings.js';
import { STATEMENTS, type Row, type SharedRows } from '../../src/diagnose/reads/index.js';
import { prepareStructure } from '../../src/diagnose/calltree.js';
import { operationEvidence } from '../../src/diagnose/evidence/operations.js';
import { changeEvidence } from '../../src/diagnose/evidence/changes.js';
import { findDeploys } from '../../src/diagnose/events.js';
import { rankFindings } from '../../src/diagnose/rank.js';
import type { EvidenceInputs } from '../../src/diagnose/evidence/inputs.js';
import { boundsFor } from '../../src/diagnose/index.js';

const B = 300_000_000;
const TO = 1_790_000_000_000_000 - (1_790_000_000_000_000 % B);
const FROM = TO - 3 * B;
const { bounds, baseBuckets } = boundsFor(FROM, TO);

interface Op {
  service: string;
  operation: string;
  kind?: number;
  n: number;
  k: number;
  p95: number;
  peer?: string;
  /** baseline error rate and p95 */
  baseRate: number;
  baseP95: number;
  /** calls above the baseline p95 in the window (5% = unchanged) */
  above?: number;
  /** no spans in the window (the service is down) */
  silent?: boolean;
}

/** Bucket rows as the series statement returns them: one row per series, each column a list. */
function seriesAsStored(rows: Row[]): Row[] {
  const out = new Map<string, Row & Record<'t' | 'value' | 'n' | 'k', unknown[]>>();
  for (const r of rows) {
    const key = `${String(r['service_name'])}\0${String(r['operation'])}\0${String(r['signal'])}`;
    const g = out.get(key) ?? { service_name: r['service_name'], operation: r['operation'], signal: r['signal'], t: [], value: [], n: [], k: [] };
    out.set(key, g);
    for (const c of ['t', 'value', 'n', 'k'] as const) g[c].push(r[c]);
  }
  return [...out.values()];
}

function scenario(ops: Op[], edges: [string, string, string][], deployments: Row[] = [], extra: Partial<EvidenceInputs> = {}) {
  const windowOps: Row[] = [];
  const series: Row[] = [];
  for (const o of ops) {
    for (let i = 1; i <= baseBuckets + 6; i++) {
      const t = FROM - (FROM % B) - i * B;
      const n = Math.round(o.n / 3);
      series.push({ service_name: o.service, operation: o.operation, signal: 'error_rate', t, value: 100 * o.baseRate, n, k: Math.round(n * o.baseRate) });
      series.push({ service_name: o.service, operation: o.operation, signal: 'latency_p95', t, value: o.baseP95 * (0.97 + 0.06 * ((i * 7) % 5) / 4), n, k: null });
    }
    if (o.silent) continue;
    windowOps.push({
      service_name: o.service,
      operation: o.operation,
      span_name: o.operation,
      span_kind: o.kind ?? 2,
      n: o.n,
      k: o.k,
      q: [o.p95 / 2, o.p95, o.p95 * 1.5],
      mean_us: o.p95 / 2,
      peer: o.peer ?? null,
      error_trace: o.k ? 'ab'.repeat(16) : null,
      slowest_span: 'cd'.repeat(8),
      first_error_us: o.k ? FROM : null,
    });
  }
  // Rows as the store returns them, through the statements' decoders.
  const shared: SharedRows = {
    windowOps: windowOps.map(STATEMENTS.windowOps.decode),
    windowErrors: [],
    callSequences: [],
    templateBins: [],
    errorTypesFirstSeen: [],
    series: seriesAsStored(series).map(STATEMENTS.series.decode),
    edges: edges.map(([caller, caller_operation, callee]) => STATEMENTS.edges.decode({ caller, caller_operation, callee, n: 100, k: 0 })),
    edgeScale: 1,
    windowSample: { slices: [[0, 1]], scale: 1 },
    deployments: [],
    windowLogs: [],
    profiles: [],
    genAi: [],
    genAiBefore: [],
    anomalies: [],
    callTree: [],
    structureRead: { lo: FROM, historyTo: FROM, mid: FROM, modHistory: 1, modRecent: 1 },
    logLevels: [],
    gauges: [],
  };
  const model = buildModel(shared, bounds, baseBuckets, new Set(ops.map((o) => o.service)));
  const above = latencyCandidates(model).map((o) => ({ service_name: o.service, operation: o.operation, above: ops.find((x) => x.service === o.service && x.operation === o.operation)?.above ?? Math.round(o.n * 0.05) }));
  applyExceedances(model, above.map(STATEMENTS.exceedances.decode));
  const rows = deployments.map(STATEMENTS.deployments.decode);
  const x: EvidenceInputs = {
    root: 'gateway',
    bounds,
    model,
    tree: prepareStructure([], [], [], FROM, TO),
    change: null,
    silent: new Set(),
    deploys: findDeploys(rows, bounds.lookFrom),
    deployments: rows,
    newErrorTypes: new Map(),
    windowLogs: [],
    templates: new Map(),
    templateBins: [],
    profiles: [],
    genAi: [],
    genAiBefore: [],
    anomalies: [],
    firstSeen: () => bounds.lookFrom,
    ...extra,
  };
  return rankFindings(x, [...operationEvidence(x), ...changeEvidence(x)], { spans: true, logs: true, metrics: true, profiles: true }).findings;
}

const CHAIN_EDGES: [string, string, string][] = [
  ['gateway', '→ cart GET /cart', 'cart'],
  ['cart', '→ stock GET /stock', 'stock'],
];

/** The chain, healthy: every operation at its baseline. */
function chain(over: Partial<Record<string, Partial<Op>>> = {}): Op[] {
  const base: Op[] = [
    { service: 'gateway', operation: 'GET /checkout', n: 3000, k: 30, p95: 80_000, baseRate: 0.01, baseP95: 80_000 },
    { service: 'gateway', operation: '→ cart GET /cart', kind: 3, n: 3000, k: 3, p95: 60_000, baseRate: 0.001, baseP95: 60_000, peer: 'cart' },
    { service: 'cart', operation: 'GET /cart', n: 3000, k: 3, p95: 58_000, baseRate: 0.001, baseP95: 58_000 },
    { service: 'cart', operation: '→ stock GET /stock', kind: 3, n: 3000, k: 3, p95: 30_000, baseRate: 0.001, baseP95: 30_000, peer: 'stock' },
    { service: 'cart', operation: '→ postgresql SELECT', kind: 3, n: 6000, k: 0, p95: 5_000, baseRate: 0.0005, baseP95: 5_000, peer: 'postgresql' },
    { service: 'stock', operation: 'GET /stock', n: 3000, k: 3, p95: 28_000, baseRate: 0.001, baseP95: 28_000 },
    { service: 'gateway', operation: '→ ads GET /ads', kind: 3, n: 3000, k: 300, p95: 200_000, baseRate: 0.1, baseP95: 200_000, peer: 'ads' },
    { service: 'ads', operation: 'GET /ads', n: 3000, k: 300, p95: 190_000, baseRate: 0.1, baseP95: 190_000 },
  ];
  return base.map((o) => ({ ...o, ...(over[`${o.service} ${o.operation}`] ?? {}) }));
}
const EDGES: [string, string, string][] = [...CHAIN_EDGES, ['gateway', '→ ads GET /ads', 'ads']];

const top = (f: Finding[]) => f[0]!;

describe('the causal walk', () => {
  it('a healthy system, noisy neighbour included, has no finding above low', () => {
    const f = scenario(chain(), EDGES);
    expect(f.filter((x) => ['critical', 'high', 'medium'].includes(x.severity))).toEqual([]);
  });

  it('errors in the leaf: the leaf is blamed, the entry spike is its symptom', () => {
    const failing = { k: 600 };
    const f = scenario(
      chain({ 'gateway GET /checkout': { k: 630 }, 'gateway → cart GET /cart': failing, 'cart GET /cart': failing, 'cart → stock GET /stock': failing, 'stock GET /stock': failing }),
      EDGES,
    );
    expect(top(f)).toMatchObject({ service: 'stock', signal: 'error_rate', kind: 'dependency_failure', operation: 'GET /stock' });
    expect(['critical', 'high']).toContain(top(f).severity);
    const symptom = f.find((x) => x.service === 'gateway' && x.signal === 'error_rate')!;
    expect(symptom.score).toBeLessThan(top(f).score);
    expect(f.find((x) => x.service === 'cart' && x.signal === 'error_rate')!.score).toBeLessThan(top(f).score);
  });

  it('instances that started with the failure are named', () => {
    const failing = { k: 600 };
    const over = { 'gateway GET /checkout': { k: 630 }, 'gateway → cart GET /cart': failing, 'cart GET /cart': failing, 'cart → stock GET /stock': failing, 'stock GET /stock': failing };
    const inst = (id: string, first: number) => ({ service_name: 'stock', service_version: '1', container_image: null, service_instance_id: id, k8s_pod_name: id, first_us: first, last_us: TO, n: 100 });
    const steady = scenario(chain(over), EDGES, [inst('stock-1', bounds.lookFrom)]);
    const restarted = scenario(chain(over), EDGES, [inst('stock-1', bounds.lookFrom), inst('stock-2', FROM + 1000), inst('stock-3', FROM + 2000)]);
    const restartsOf = (f: Finding[]) => f.filter((x) => x.service === 'stock' && /instances? \(re\)started/.test(x.summary));
    expect(restartsOf(steady)).toEqual([]);
    expect(restartsOf(restarted).map((x) => x.summary)).toEqual([expect.stringMatching(/^stock: 2 instances \(re\)started/)]);
    // Corroboration: the same blame, as sure or surer.
    expect(top(restarted).service).toBe('stock');
    expect(top(restarted).score).toBeGreaterThanOrEqual(top(steady).score);
  });

  it('a dependency that stopped answering is blamed from its callers\' side', () => {
    const failing = { k: 2900 };
    const f = scenario(
      chain({ 'gateway GET /checkout': { k: 2930 }, 'gateway → cart GET /cart': failing, 'cart GET /cart': failing, 'cart → stock GET /stock': failing, 'stock GET /stock': { silent: true } }),
      CHAIN_EDGES.slice(0, 1),
    );
    expect(top(f)).toMatchObject({ service: 'stock', signal: 'error_rate', kind: 'dependency_failure' });
    expect(top(f).summary).toMatch(/no spans in the window/);
  });

  it('a silent dependency that makes its callers wait: errors first; a slow one that makes them time out: latency first', () => {
    const timeout = { k: 2900, p95: 3_000_000, above: 2950 };
    const silent = scenario(
      chain({ 'gateway GET /checkout': { ...timeout, k: 2930 }, 'gateway → cart GET /cart': timeout, 'cart GET /cart': timeout, 'cart → stock GET /stock': timeout, 'stock GET /stock': { silent: true } }),
      CHAIN_EDGES.slice(0, 1),
    );
    expect(silent.slice(0, 2).map((x) => `${x.service} ${x.signal}`)).toEqual(['stock error_rate', 'stock latency_p95']);
    const slow = scenario(
      chain({ 'gateway GET /checkout': { ...timeout, k: 2930 }, 'gateway → cart GET /cart': timeout, 'cart GET /cart': timeout, 'cart → stock GET /stock': timeout, 'stock GET /stock': { p95: 2_990_000, above: 2950 } }),
      EDGES,
    );
    expect(slow.slice(0, 2).map((x) => `${x.service} ${x.signal}`)).toEqual(['stock latency_p95', 'stock error_rate']);
  });

  it('latency in the leaf: the leaf is blamed for latency_p95', () => {
    const slow = (p95: number) => ({ p95, above: 2400 });
    const f = scenario(
      chain({ 'gateway GET /checkout': slow(280_000), 'gateway → cart GET /cart': slow(260_000), 'cart GET /cart': slow(258_000), 'cart → stock GET /stock': slow(230_000), 'stock GET /stock': slow(228_000) }),
      EDGES,
    );
    expect(top(f)).toMatchObject({ service: 'stock', signal: 'latency_p95' });
    expect(top(f).after! / top(f).before!).toBeGreaterThan(5);
  });

  it('a slow database is blamed on the service that calls it, naming the call', () => {
    const f = scenario(
      chain({ 'gateway GET /checkout': { p95: 200_000, above: 2000 }, 'gateway → cart GET /cart': { p95: 180_000, above: 2000 }, 'cart GET /cart': { p95: 178_000, above: 2000 }, 'cart → postgresql SELECT': { p95: 125_000, above: 5000 } }),
      EDGES,
    );
    expect(top(f)).toMatchObject({ service: 'cart', operation: '→ postgresql SELECT', signal: 'latency_p95', kind: 'dependency_failure' });
  });

  it('a new error type is news for an established service, not for one that began reporting since the baseline', () => {
    const newErrorTypes = new Map([['stock', new Map([['OutOfStockError', 40]])]]);
    const established = scenario(chain(), EDGES, [], { newErrorTypes });
    // Alone it is context, not a cause: listed, at most info.
    expect(established.find((f) => f.kind === 'new_error_type')).toMatchObject({ service: 'stock', signal: 'error_rate', severity: 'info' });
    const fresh = scenario(chain(), EDGES, [], { newErrorTypes, firstSeen: (s) => (s === 'stock' ? FROM - B : bounds.lookFrom) });
    expect(fresh.find((f) => f.kind === 'new_error_type')).toBeUndefined();
  });

  it("leaves out evidence of a service outside the diagnosed service's call graph", () => {
    const failing = { k: 600 };
    // A service of another application, failing: no edge from gateway's graph reaches it.
    const other: Op[] = [{ service: 'batch', operation: 'RUN job', n: 3000, k: 900, p95: 50_000, baseRate: 0.01, baseP95: 50_000 }];
    const f = scenario([...chain({ 'stock GET /stock': failing, 'cart → stock GET /stock': failing, 'cart GET /cart': failing }), ...other], EDGES);
    expect(top(f).service).toBe('stock');
    expect(f.some((x) => x.service === 'batch')).toBe(false);
  });

  it('severity bands', () => {
    expect([0.9, 0.7, 0.5, 0.3, 0.1].map(severityOf)).toEqual(['critical', 'high', 'medium', 'low', 'info']);
  });
});
