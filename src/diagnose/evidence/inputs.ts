// What every evidence module may read: the request's bounds and diagnosed service, the model of
// operations and calls, the prepared call tree with the diagnosed service's own change, and the
// shared rows. Built once per diagnosed service (index.ts); modules are pure functions of it.
import type { Model } from '../model.js';
import type { PreparedStructure, RootChange } from '../calltree.js';
import type { DeployEvent } from '../events.js';
import type { AnomalyRow, Bounds, DeploymentRow, GenAiBeforeRow, GenAiRow, ProfileRow, TemplateBinRow, TemplateRow, WindowLogRow } from '../reads/index.js';

export interface EvidenceInputs {
  /** The service diagnosed. */
  root: string;
  bounds: Bounds;
  model: Model;
  tree: PreparedStructure;
  /** The diagnosed service's requests before and since their onset; null without enough of them. */
  change: RootChange | null;
  /** Callees that stopped answering (paths.ts silentCallees): waits on calls to them are theirs. */
  silent: ReadonlySet<string>;
  deploys: readonly DeployEvent[];
  deployments: readonly DeploymentRow[];
  /** Window error types not seen before the window: service → error_type → count. */
  newErrorTypes: ReadonlyMap<string, ReadonlyMap<string, number>>;
  windowLogs: readonly WindowLogRow[];
  templates: ReadonlyMap<number, TemplateRow>;
  /** Log records per service, event (template, merges resolved) and fine bin over the call tree's range. */
  templateBins: readonly TemplateBinRow[];
  profiles: readonly ProfileRow[];
  genAi: readonly GenAiRow[];
  genAiBefore: readonly GenAiBeforeRow[];
  anomalies: readonly AnomalyRow[];
  /** When each service first reported (µs): a service newer than the baseline has nothing "new" to show. */
  firstSeen(service: string): number | undefined;
}

/** Something is new against what the service did before; for a service that began reporting since the baseline began, everything is. */
export const established = (x: EvidenceInputs, service: string) => (x.firstSeen(service) ?? -Infinity) < x.bounds.newSince;
