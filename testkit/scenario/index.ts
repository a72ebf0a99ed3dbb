// Scenario generator for the diagnosis evaluation (npm run eval:diagnose) and its tests: a seeded
// microservice system (topology.ts), one injected fault and its expectation (faults.ts), the
// telemetry (traffic.ts), sending it through OTLP and the profile endpoint (send.ts), and running
// and scoring a case on the real server (run.ts); recorded-style cases, telemetry shaped like a real
// system's recording and the failure classes seen on it (recorded.ts).
export * from './topology.js';
export * from './faults.js';
export * from './traffic.js';
export * from './send.js';
export * from './run.js';
export * from './recorded.js';

import { FAULT_KINDS, type CaseSpec, type FaultKind } from './faults.js';

/**
 * The evaluation's case list: `perKind` seeds of every faulty kind and `controls` fault-free cases,
 * each case on its own seed (so its own topology), interleaved by kind.
 */
export function caseList(opts: { baseSeed?: number; perKind?: number; controls?: number; kinds?: readonly FaultKind[] } = {}): CaseSpec[] {
  const base = opts.baseSeed ?? 1;
  const kinds = (opts.kinds ?? FAULT_KINDS).filter((k) => k !== 'none');
  const out: CaseSpec[] = [];
  let seed = base;
  for (let round = 0; round < (opts.perKind ?? 3); round++) for (const kind of kinds) out.push({ seed: seed++, kind });
  const controls = opts.kinds && !opts.kinds.includes('none') ? 0 : (opts.controls ?? 3);
  for (let i = 0; i < controls; i++) out.push({ seed: seed++, kind: 'none' });
  return out;
}
