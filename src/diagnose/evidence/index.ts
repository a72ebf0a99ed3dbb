// Every kind of evidence, one module each: a new kind is a new file and a line here. Each module is
// a pure function of the diagnosed service's inputs (inputs.ts) and returns candidates on the one
// scale rank.ts orders.
import type { Candidate } from './candidate.js';
import type { EvidenceInputs } from './inputs.js';
import { latencyEvidence } from './latency.js';
import { callEvidence, pathEvidence } from './paths.js';
import { operationEvidence } from './operations.js';
import { errorLogSeriesEvidence, logLevelEvidence } from './log-levels.js';
import { logEventEvidence } from './log-events.js';
import { gaugeEvidence } from './gauges.js';
import { changeEvidence } from './changes.js';
import { profileEvidence } from './profiles.js';
import { genAiEvidence } from './gen-ai.js';

export const EVIDENCE: readonly ((x: EvidenceInputs) => Candidate[])[] = [
  latencyEvidence, // own work and wire time, from the call tree
  operationEvidence, // errors and p95 of operations, along the call graph
  callEvidence, // calls per request, silent callees
  pathEvidence, // what callers do after an answer
  logLevelEvidence, // error and warning records per request
  errorLogSeriesEvidence, // error records against the 5-minute series' baseline
  logEventEvidence, // log events that vanished or appeared
  gaugeEvidence, // pod CPU, memory, restarts
  changeEvidence, // deploys, restarts, new error types (corroboration)
  profileEvidence, // profiled hot spots
  genAiEvidence, // model calls
];

/** Every candidate every module finds for the diagnosed service's inputs. */
export const gatherEvidence = (x: EvidenceInputs): Candidate[] => EVIDENCE.flatMap((f) => f(x));

export type { Candidate, EvidenceKind } from './candidate.js';
export type { EvidenceInputs } from './inputs.js';
export { silentCallees } from './paths.js';
