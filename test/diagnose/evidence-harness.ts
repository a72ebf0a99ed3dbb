// Runs the evidence modules and the ranking on call-tree, log-level and gauge rows alone (no store,
// no operations model), as index.ts runs them for a diagnosed service: what the unit tests of the
// call-tree evidence check.
import { prepareStructure, rootChange, type PreparedStructure, type RootChange } from '../../src/diagnose/calltree.js';
import { latencyEvidence } from '../../src/diagnose/evidence/latency.js';
import { callEvidence, pathEvidence, silentCallees } from '../../src/diagnose/evidence/paths.js';
import { logLevelEvidence } from '../../src/diagnose/evidence/log-levels.js';
import { logEventEvidence } from '../../src/diagnose/evidence/log-events.js';
import { gaugeEvidence } from '../../src/diagnose/evidence/gauges.js';
import type { Candidate } from '../../src/diagnose/evidence/candidate.js';
import type { EvidenceInputs } from '../../src/diagnose/evidence/inputs.js';
import { rankServices, scoreOf } from '../../src/diagnose/rank.js';
import type { Model } from '../../src/diagnose/model.js';
import type { CallTreeRow, GaugeRow, LogLevelRow, TemplateBinRow, TemplateRow } from '../../src/diagnose/reads/index.js';

export interface Analysis {
  root: RootChange | null;
  /** Services with significant evidence, most surprising first. */
  services: { service: string; surprise: number; score: number; evidence: Candidate[] }[];
  /** Every candidate, significant or not, context included. */
  all: Candidate[];
}

const HOUR = 3_600_000_000;

/** The inputs of the diagnosed service `root` over a prepared call tree, with no operations model. */
export function inputsOf(p: PreparedStructure, root: string, extra: Partial<EvidenceInputs> = {}): EvidenceInputs {
  const model: Model = {
    bounds: { from: p.from, to: p.to, lookFrom: p.from - 2 * HOUR, newSince: p.from - HOUR },
    baseBuckets: 12,
    series: new Map(),
    ops: [],
    byService: new Map(),
    edges: [],
    known: new Set(),
    callees: new Map(),
    callers: new Map(),
  };
  const x: EvidenceInputs = {
    root,
    bounds: model.bounds,
    model,
    tree: p,
    change: rootChange(p, root),
    silent: new Set(),
    deploys: [],
    deployments: [],
    newErrorTypes: new Map(),
    windowLogs: [],
    templates: new Map<number, TemplateRow>(),
    templateBins: [] as TemplateBinRow[],
    profiles: [],
    genAi: [],
    genAiBefore: [],
    anomalies: [],
    firstSeen: () => undefined,
    ...extra,
  };
  x.silent = new Set(silentCallees(x).keys());
  return x;
}

/** The call tree's evidence (latency, paths, log levels and events, gauges) ranked over every service. */
export function analyseFrom(p: PreparedStructure, root: string, extra: Partial<EvidenceInputs> = {}): Analysis {
  const x = inputsOf(p, root, extra);
  const all = [latencyEvidence, callEvidence, pathEvidence, logLevelEvidence, logEventEvidence, gaugeEvidence].flatMap((f) => f(x));
  const everyone = new Set(all.map((c) => c.service));
  const services = rankServices(all, everyone).map((r) => ({ service: r.service, surprise: r.surprise, score: scoreOf(r.surprise), evidence: r.candidates }));
  return { root: x.change, services, all };
}

export function analyse(rows: readonly CallTreeRow[], logs: readonly LogLevelRow[], gauges: readonly GaugeRow[], root: string, from: number, to: number): Analysis {
  return analyseFrom(prepareStructure(rows, logs, gauges, from, to), root);
}

export const top = (a: Analysis) => a.services[0];
export const whats = (a: Analysis, service: string) => a.services.find((s) => s.service === service)?.evidence.map((e) => e.what) ?? [];
