// Log template mining: the public API. See reference.ts for the algorithm, core.ts for the engine
// contract, miner.ts for the per-template bookkeeping.
import type { ClassRule } from './core.js';
import { LogMiner, type MinerOptions } from './miner.js';
import { ReferenceCore } from './reference.js';
import { WasmCore } from './wasm-core.js';

export { LogMiner } from './miner.js';
export type { BatchMeta, MineBatchResult, MinerOptions, StoredTemplateRow, TemplateRow } from './miner.js';
export { computeLogCounters, isPinnedZero, slotLabel, slotLabels } from './counters.js';
export type { CounterSource, LogCounter, LogCounterOptions, SlotStats } from './counters.js';
export { CLASS_RULES, ENGINE_VERSION, FLAG_CHANGED, FLAG_JSON, FLAG_NEW, FLAG_TRUNCATED, MAX_PARAMS } from './core.js';
export type { ClassRule } from './core.js';
export { maskToken } from './mask.js';
export { jsonShape } from './json-shape.js';

export interface CreateMinerOptions extends MinerOptions {
  /** 'wasm' (default; the AssemblyScript build) or 'reference' (plain TypeScript, same output) */
  impl?: 'wasm' | 'reference';
  /** similarity threshold in tenths (default 7); for the leave-out evaluation, not for production */
  similarityTenths?: number;
  /** distinct words before a position is a variable (default 5); for the leave-out evaluation, not for production */
  enumMax?: number;
  /** rules left out, to measure what each does (eval:logs --ablation); needs impl 'reference' */
  without?: readonly ClassRule[];
}

export function createMiner(opts: CreateMinerOptions = {}): LogMiner {
  const cfg = { maxTemplatesPerService: opts.maxTemplatesPerService ?? 2000, similarityTenths: opts.similarityTenths, enumMax: opts.enumMax, without: opts.without };
  if (opts.impl !== 'reference' && (opts.without?.length ?? 0) > 0) throw new Error('createMiner: rules are left out only by the reference engine');
  const core = opts.impl === 'reference' ? new ReferenceCore(cfg) : new WasmCore(cfg);
  return new LogMiner(core, opts);
}
