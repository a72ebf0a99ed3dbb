// The golden-event check the log event cases share: lines of several events, written by hand, mined
// interleaved; each event must end as one template with the pattern written beside it, and the events
// must stay apart.
import { expect } from 'vitest';
import type { LogMiner, MineBatchResult } from '../../../src/pipeline/logminer/index.js';

/** Follows merged_into (as a reader of svc_log_templates does) from the rows a miner returned. */
export function resolverOf(results: MineBatchResult[]): (id: number) => number {
  const into = new Map<number, number>();
  for (const r of results) for (const e of r.evicted) if (e.merged_into !== null) into.set(e.template_id, e.merged_into);
  return (id) => {
    while (into.has(id)) id = into.get(id)!;
    return id;
  };
}

/**
 * Mines the events' lines interleaved (in `batch`-line batches) with a fresh miner from `make`; each
 * event must end as one template with the given pattern, and the events must stay apart.
 */
export function goldenEvents(make: () => LogMiner, events: { pattern: string; lines: string[] }[], batch = 1000): LogMiner {
  const m = make();
  const lines: { e: number; line: string }[] = [];
  const longest = Math.max(...events.map((ev) => ev.lines.length));
  for (let i = 0; i < longest; i++) events.forEach((ev, e) => ev.lines[i] !== undefined && lines.push({ e, line: ev.lines[i]! }));
  const results: MineBatchResult[] = [];
  const ids: number[] = [];
  for (let i = 0; i < lines.length; i += batch) {
    const r = m.mineBatch('svc', lines.slice(i, i + batch).map((l) => l.line));
    results.push(r);
    ids.push(...r.templateIds);
  }
  const resolve = resolverOf(results);
  const byEvent = events.map(() => new Set<number>());
  lines.forEach((l, i) => byEvent[l.e]!.add(resolve(ids[i]!)));
  events.forEach((ev, e) => {
    expect([...byEvent[e]!].length, `one template for: ${ev.pattern}`).toBe(1);
    expect(m.template([...byEvent[e]!][0]!)!.pattern).toBe(ev.pattern);
  });
  expect(new Set(byEvent.map((s) => [...s][0])).size, 'events stay apart').toBe(events.length);
  return m;
}
