// Numeric slot statistics of log templates and the diagnosis's `log_counters`, as pure functions.
// A slot is a position of a template that held a number (`took <*> ms`, `retries=<*>`); its stats
// are cumulative since the miner started (they are not persisted in svc_log_templates).
import { splitPattern } from './tokenize.js';

/** Running statistics of one numeric template slot. */
export interface SlotStats {
  samples: number;
  sum: number;
  min: number;
  max: number;
  /** consecutive latest samples equal to 0 */
  zeroRun: number;
  /** a non-zero value was seen before the current run of zeros */
  movedBefore: boolean;
}

export function newSlotStats(): SlotStats {
  return { samples: 0, sum: 0, min: Infinity, max: -Infinity, zeroRun: 0, movedBefore: false };
}

export function addSample(s: SlotStats, v: number): void {
  s.samples++;
  s.sum += v;
  if (v < s.min) s.min = v;
  if (v > s.max) s.max = v;
  if (v === 0) s.zeroRun++;
  else {
    s.zeroRun = 0;
    s.movedBefore = true;
  }
}

/** One entry of the diagnosis block's `log_counters`. */
export interface LogCounter {
  label: string;
  pattern: string;
  avg_value: number;
  min_value: number;
  max_value: number;
  samples: number;
  pinned_zero: boolean;
}

export interface CounterSource {
  pattern: string;
  /** slot → stats */
  stats: ReadonlyMap<number, SlotStats>;
}

export interface LogCounterOptions {
  /** zeros in a row, after movement, that make a counter "pinned at zero" (default 5) */
  pinnedZeroRun?: number;
  /** minimum samples for a slot to be reported (default 2) */
  minSamples?: number;
  /** at most this many counters, pinned ones first, then by samples (default 20) */
  limit?: number;
}

/**
 * A counter is pinned at zero when it used to move (a non-zero value was seen) and its latest
 * `pinnedZeroRun` values are all 0 — e.g. `processed <*> records` stuck at 0 after a fault.
 */
export function isPinnedZero(s: SlotStats, pinnedZeroRun = 5): boolean {
  return s.movedBefore && s.zeroRun >= pinnedZeroRun;
}

/** Computes `log_counters` from templates' slot stats. Pure; sorted pinned first, then by samples. */
export function computeLogCounters(sources: Iterable<CounterSource>, opts: LogCounterOptions = {}): LogCounter[] {
  const run = opts.pinnedZeroRun ?? 5;
  const minSamples = opts.minSamples ?? 2;
  const limit = opts.limit ?? 20;
  const out: LogCounter[] = [];
  for (const src of sources) {
    for (const [slot, s] of src.stats) {
      if (s.samples < minSamples) continue;
      out.push({
        label: slotLabels(src.pattern).get(slot) ?? slotLabel(src.pattern, slot),
        pattern: src.pattern,
        avg_value: s.sum / s.samples,
        min_value: s.min,
        max_value: s.max,
        samples: s.samples,
        pinned_zero: isPinnedZero(s, run),
      });
    }
  }
  out.sort((a, b) => Number(b.pinned_zero) - Number(a.pinned_zero) || b.samples - a.samples || a.label.localeCompare(b.label));
  return out.slice(0, limit);
}

const trimPunct = (s: string): string => s.replace(/^[^A-Za-z0-9_$.-]+|[^A-Za-z0-9_$.-]+$/g, '');

/**
 * A readable name for slot `slot` of a pattern: the key of `key=<*>` / `key:<*>`, else the
 * constant token before it (`port <*>` → port), else `p<slot>`. For a JSON shape pattern the slot is
 * the value ordinal and the label is the key path.
 */
export function slotLabel(pattern: string, slot: number): string {
  if (pattern.startsWith('{')) return jsonSlotLabel(pattern, slot) ?? `p${slot}`;
  const tokens = splitPattern(pattern);
  const t = tokens[slot];
  if (t === undefined) return `p${slot}`;
  const m = /([A-Za-z_][A-Za-z0-9_.-]*)[=:]<\*>/.exec(t);
  if (m) return m[1]!;
  for (let i = slot - 1; i >= 0 && i >= slot - 2; i--) {
    const p = trimPunct(tokens[i]!);
    if (p && !tokens[i]!.includes('<*>')) return p;
  }
  return `p${slot}`;
}

/** Key path of the `slot`-th value of a JSON shape pattern such as {"a":<*>,"b":{"c":<*>}}. */
function jsonSlotLabel(pattern: string, slot: number): string | undefined {
  const path: string[] = [];
  let key = '';
  let n = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '"') {
      let j = i + 1;
      while (j < pattern.length && pattern[j] !== '"') j += pattern[j] === '\\' ? 2 : 1;
      key = pattern.slice(i + 1, j);
      i = j;
    } else if (c === '{') path.push('');
    else if (c === ':') path[path.length - 1] = key;
    else if (c === '}') path.pop();
    else if (c === '<' && pattern.startsWith('<*>', i)) {
      if (n === slot) return path.filter(Boolean).join('.');
      n++;
      i += 2;
    }
  }
  return undefined;
}

/**
 * Unique labels of every wildcard slot of a pattern (token positions holding `<*>`, or JSON value
 * ordinals): slotLabel(), suffixed with `#<slot>` when two slots would share a label.
 */
export function slotLabels(pattern: string): Map<number, string> {
  const slots: number[] = [];
  if (pattern.startsWith('{')) {
    let n = 0;
    for (let i = pattern.indexOf('<*>'); i >= 0; i = pattern.indexOf('<*>', i + 3)) slots.push(n++);
  } else {
    const tokens = splitPattern(pattern);
    for (let i = 0; i < tokens.length; i++) if (tokens[i]!.includes('<*>')) slots.push(i);
  }
  const out = new Map<number, string>();
  const seen = new Set<string>();
  for (const s of slots) {
    let l = slotLabel(pattern, s);
    if (seen.has(l)) l = `${l}#${s}`;
    seen.add(l);
    out.set(s, l);
  }
  return out;
}
