// The simulated system of one scenario: which services exist, what they expose, whom they call.
// Pure and seeded: the same seed gives the same topology. Names come from a pool so topologies
// differ by seed; the diagnosis must not depend on any name.
import { rng } from '../rng.js';

export type Protocol = 'http' | 'grpc';

/** One call an operation makes to another service's operation. */
export interface Call {
  callee: string;
  /** Index into the callee's `ops`. */
  op: number;
  /** Share of the caller's requests that make this call (a cache hit or a branch skips it). */
  probability: number;
  /** Share of the callee's failures the caller turns into its own failure (the rest it degrades around). */
  propagate: number;
}

/** One server operation of a service. */
export interface Operation {
  protocol: Protocol;
  /** HTTP: method and route; gRPC: rpc.service and rpc.method. */
  method: string;
  route: string;
  /** Median and log-spread of the operation's own (self) work, µs. */
  selfMedianUs: number;
  selfSigma: number;
  calls: Call[];
  /** Downstream calls run side by side (a fan-out) instead of one after the other. */
  parallel: boolean;
  /** Database statements per request (0 when this operation does not touch the database). */
  dbCalls: number;
  /** Calls the LLM on this share of requests (0 when it does not). */
  llmProbability: number;
}

export interface ServiceNode {
  name: string;
  /** 0 = the entry; callees are one level or more deeper, so the graph has no cycle. */
  level: number;
  protocol: Protocol;
  ops: Operation[];
  /** Share of requests the service fails on its own in normal operation. */
  baseErrorRate: number;
  /** Stationary but high error rate and heavy-tailed latency, in baseline and window alike. */
  noisy: boolean;
  profiled: boolean;
  replicas: number;
  version: string;
  language: 'go' | 'java' | 'node' | 'python';
}

export interface DbConfig {
  service: string;
  system: string;
  name: string;
  /** New semantic-convention names (db.system.name, db.operation.name) instead of the old ones. */
  newNames: boolean;
}

export interface LlmConfig {
  service: string;
  provider: string;
  host: string;
  model: string;
  maxTokens: number;
  /** gen_ai.provider.name and input/output_tokens (new) or gen_ai.system and prompt/completion_tokens (old). */
  newNames: boolean;
}

export interface Topology {
  seed: number;
  namespace: string;
  entry: string;
  services: ServiceNode[];
  /** Distinct caller → callee service pairs. */
  edges: { caller: string; callee: string; protocol: Protocol }[];
  /** Levels below the entry (2-4). */
  depth: number;
  db: DbConfig;
  llm: LlmConfig;
  noisy: string;
  /** Entry operations' traffic shares (sum 1), index-aligned with the entry's ops. */
  entryMix: number[];
}

const ENTRY_NAMES = ['gateway', 'frontend', 'api-gateway', 'edge-proxy', 'web-bff'];
const SERVICE_POOL = [
  'orders', 'payments', 'inventory', 'users', 'auth', 'catalog', 'search', 'cart', 'shipping', 'pricing',
  'recommendations', 'notifications', 'reviews', 'ledger', 'fraud', 'accounts', 'checkout', 'quotes',
  'profiles', 'media', 'tax', 'coupons', 'billing', 'assistant', 'geo', 'currency',
];
// Names a large topology adds (EVAL_SERVICES): a default-sized one draws from SERVICE_POOL alone, so its seeds keep their topologies.
const MORE_SERVICES = [
  'stations', 'routes', 'trains', 'seats', 'tickets', 'contacts', 'food', 'consign', 'insurance', 'travel',
  'config', 'security', 'verification', 'rebook', 'cancel', 'admin', 'news', 'avatar', 'delivery', 'voucher',
];
const NAMESPACES = ['shop', 'prod', 'commerce', 'platform'];
const LLM_CHOICES = [
  { provider: 'openai', host: 'api.openai.com', models: ['gpt-4o-mini', 'gpt-4.1', 'gpt-4o'] },
  { provider: 'anthropic', host: 'api.anthropic.com', models: ['claude-3-5-haiku', 'claude-sonnet-4'] },
  { provider: 'aws.bedrock', host: 'bedrock-runtime.us-east-1.amazonaws.com', models: ['amazon.nova-lite-v1', 'meta.llama3-70b'] },
];
const HTTP_SHAPES: [string, string][] = [['GET', '/{id}'], ['POST', ''], ['GET', '/search'], ['PUT', '/{id}'], ['GET', '']];
const GRPC_METHODS = ['Get', 'List', 'Create', 'Check', 'Reserve', 'Resolve'];
const LANGUAGES: ServiceNode['language'][] = ['go', 'java', 'node', 'python'];

export type Rand = () => number;
export const pick = <T>(r: Rand, a: readonly T[]): T => a[Math.floor(r() * a.length)]!;
export const between = (r: Rand, lo: number, hi: number): number => lo + r() * (hi - lo);
export const intBetween = (r: Rand, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));

export function shuffled<T>(r: Rand, a: readonly T[]): T[] {
  const out = [...a];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const pascal = (s: string): string => s.split('-').map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');

function makeOps(r: Rand, name: string, protocol: Protocol, count: number): Operation[] {
  const shapes = shuffled(r, HTTP_SHAPES);
  const methods = shuffled(r, GRPC_METHODS);
  return Array.from({ length: count }, (_v, i) => ({
    protocol,
    method: protocol === 'http' ? shapes[i]![0] : methods[i]!,
    route: protocol === 'http' ? `/api/${name}${shapes[i]![1]}` : `${name.replace(/-/g, '')}.v1.${pascal(name)}Service`,
    selfMedianUs: Math.round(between(r, 1_500, 12_000)),
    selfSigma: between(r, 0.25, 0.45),
    calls: [],
    parallel: false,
    dbCalls: 0,
    llmProbability: 0,
  }));
}

/** Reach probability of every service: the share of entry requests whose trace touches it. */
export function reachProbabilities(t: Topology): Map<string, number> {
  // P(op is executed) per (service, op), propagated level by level (calls only go deeper).
  const opP = new Map<string, number>();
  const key = (s: string, i: number) => `${s}#${i}`;
  t.entryMix.forEach((w, i) => opP.set(key(t.entry, i), w));
  const order = [...t.services].sort((a, b) => a.level - b.level);
  const reach = new Map<string, number>();
  for (const s of order) {
    let notTouched = 1;
    s.ops.forEach((op, i) => {
      const p = Math.min(1, opP.get(key(s.name, i)) ?? 0);
      notTouched *= 1 - p;
      for (const c of op.calls) {
        const k = key(c.callee, c.op);
        // Independent callers: P(at least one) would be 1 - Π(1-p); the sum is close and bounded by 1 above.
        opP.set(k, Math.min(1, (opP.get(k) ?? 0) + p * c.probability));
      }
    });
    reach.set(s.name, 1 - notTouched);
  }
  return reach;
}

/** Callees of a service (distinct names). */
export const calleesOf = (t: Topology, service: string): string[] => t.edges.filter((e) => e.caller === service).map((e) => e.callee);
/** Services that call no other service (they may still call the database or the LLM). */
export const leavesOf = (t: Topology): string[] => t.services.filter((s) => s.level > 0 && calleesOf(t, s.name).length === 0).map((s) => s.name);
export const serviceOf = (t: Topology, name: string): ServiceNode => {
  const s = t.services.find((x) => x.name === name);
  if (!s) throw new Error(`no service ${name} in the topology`);
  return s;
};

/**
 * The topology of a seed: 8-11 services (or `size`, up to 47), 2-4 levels below the entry (3-6
 * past 11 services), one DB host, one LLM caller, one noisy service.
 */
export function buildTopology(seed: number, size: readonly [number, number] = [8, 11]): Topology {
  const r = rng(seed * 7919 + 17);
  const n = intBetween(r, size[0], size[1]);
  const large = n > 11;
  const depth = large ? intBetween(r, 3, 6) : intBetween(r, 2, 4);
  const entryName = pick(r, ENTRY_NAMES);
  const names = shuffled(r, large ? [...SERVICE_POOL, ...MORE_SERVICES] : SERVICE_POOL).slice(0, n - 1);
  // Levels 1..depth each get one service; the rest lean towards shallow levels (wide fan-out near the top).
  const level = new Map<string, number>();
  names.forEach((nm, i) => level.set(nm, i < depth ? i + 1 : Math.min(depth, 1 + Math.floor(r() * r() * depth) + (r() < 0.3 ? 1 : 0))));
  const services: ServiceNode[] = [entryName, ...names].map((nm) => {
    const lv = nm === entryName ? 0 : level.get(nm)!;
    const protocol: Protocol = lv === 0 || r() < 0.6 ? 'http' : 'grpc';
    return {
      name: nm,
      level: lv,
      protocol,
      ops: makeOps(r, nm, protocol, lv === 0 ? intBetween(r, 2, 3) : intBetween(r, 1, 2)),
      baseErrorRate: between(r, 0.0005, 0.003),
      noisy: false,
      profiled: false,
      replicas: intBetween(r, 1, 3),
      version: `${intBetween(r, 1, 3)}.${intBetween(r, 0, 12)}.${intBetween(r, 0, 9)}`,
      language: pick(r, LANGUAGES),
    };
  });
  const byLevel = (lv: number) => services.filter((s) => s.level === lv);
  const edges: Topology['edges'] = [];
  const addEdge = (caller: ServiceNode, callee: ServiceNode) => {
    if (edges.some((e) => e.caller === caller.name && e.callee === callee.name)) return;
    edges.push({ caller: caller.name, callee: callee.name, protocol: callee.protocol });
  };
  for (const s of services) if (s.level > 0) addEdge(pick(r, byLevel(s.level - 1)), s);
  // A shared dependency (two callers), as auth or pricing often are; a large system has several.
  for (let i = 0; i < (large ? Math.floor(n / 6) : 1); i++) {
    if (r() >= 0.7) continue;
    const deep = services.filter((s) => s.level >= 2);
    if (deep.length) {
      const callee = pick(r, deep);
      const callers = services.filter((s) => s.level < callee.level && !edges.some((e) => e.caller === s.name && e.callee === callee.name));
      if (callers.length) addEdge(pick(r, callers), callee);
    }
  }
  // Each edge becomes calls from the caller's operations: every edge is used by at least one operation.
  for (const e of edges) {
    const caller = services.find((s) => s.name === e.caller)!;
    const callee = services.find((s) => s.name === e.callee)!;
    const users = caller.ops.filter(() => r() < 0.6);
    if (!users.length) users.push(pick(r, caller.ops));
    for (const op of users) {
      op.calls.push({
        callee: callee.name,
        op: Math.floor(r() * callee.ops.length),
        probability: r() < 0.8 ? between(r, 0.75, 1) : between(r, 0.35, 0.7),
        propagate: between(r, 0.6, 1),
      });
    }
  }
  for (const s of services) for (const op of s.ops) op.parallel = op.calls.length > 1 && r() < 0.35;

  const nonEntry = services.filter((s) => s.level > 0);
  const noisy = pick(r, nonEntry);
  noisy.noisy = true;
  noisy.baseErrorRate = between(r, 0.05, 0.12);
  // The noisy service's failures are mostly absorbed by its callers (retries, fallbacks), or the
  // entry's own error rate would be noisy too and every fault would hide in it.
  for (const s of services) for (const op of s.ops) for (const c of op.calls) if (c.callee === noisy.name) c.propagate = between(r, 0.05, 0.2);
  const others = shuffled(r, nonEntry.filter((s) => s !== noisy));
  const dbHost = others[0]!;
  const llmHost = others[1]!;
  for (const op of dbHost.ops) op.dbCalls = intBetween(r, 1, 3);
  for (const op of llmHost.ops) op.llmProbability = between(r, 0.6, 1);
  const dbNew = r() < 0.5;
  const llmChoice = pick(r, LLM_CHOICES);
  const llm: LlmConfig = {
    service: llmHost.name,
    provider: llmChoice.provider,
    host: llmChoice.host,
    model: pick(r, llmChoice.models),
    maxTokens: pick(r, [256, 512, 1024]),
    newNames: r() < 0.5,
  };
  // At least three profiled services, the LLM host and the DB host among the candidates like any other.
  for (const s of shuffled(r, nonEntry).slice(0, intBetween(r, 3, 5))) s.profiled = true;
  if (r() < 0.5) services[0]!.profiled = true;

  const raw = services[0]!.ops.map(() => between(r, 0.5, 1.5));
  const total = raw.reduce((a, b) => a + b, 0);
  const t: Topology = {
    seed,
    namespace: pick(r, NAMESPACES),
    entry: entryName,
    services,
    edges,
    depth,
    db: { service: dbHost.name, system: 'postgresql', name: `${dbHost.name.replace(/-/g, '_')}_db`, newNames: dbNew },
    llm,
    noisy: noisy.name,
    entryMix: raw.map((x) => x / total),
  };
  ensureReachable(t);
  return t;
}

/**
 * Every service must be reached by some entry traffic: an operation nobody calls (an edge used only
 * by a caller's operation that is itself never called) gets the call moved to a called operation.
 */
function ensureReachable(t: Topology): void {
  for (let pass = 0; pass < 4; pass++) {
    const called = new Set<string>(t.services[0]!.ops.map((_o, i) => `${t.entry}#${i}`));
    for (const s of [...t.services].sort((a, b) => a.level - b.level))
      s.ops.forEach((op, i) => {
        if (called.has(`${s.name}#${i}`)) for (const c of op.calls) called.add(`${c.callee}#${c.op}`);
      });
    let changed = false;
    for (const s of t.services) {
      s.ops.forEach((op, i) => {
        if (called.has(`${s.name}#${i}`) || !op.calls.length) return;
        const live = s.ops.findIndex((_o, j) => called.has(`${s.name}#${j}`));
        if (live < 0) return;
        s.ops[live]!.calls.push(...op.calls.filter((c) => !s.ops[live]!.calls.some((d) => d.callee === c.callee && d.op === c.op)));
        op.calls = [];
        changed = true;
      });
      // A service whose ops are never the target of a call: point one caller at op 0.
      if (s.level > 0 && !s.ops.some((_o, i) => called.has(`${s.name}#${i}`))) {
        for (const c of t.services.flatMap((x) => x.ops.flatMap((o) => o.calls))) if (c.callee === s.name) c.op = 0;
      }
    }
    if (!changed) break;
  }
}
