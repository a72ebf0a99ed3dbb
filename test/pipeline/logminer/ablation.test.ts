// eval:logs --ablation measures what the rules of each of issue 42's classes do by leaving them out
// (CoreConfig.without). Each switch must take out its rule and only that: a line pair the rule
// joins or keeps apart is grouped the other way without it, and the full miner is unchanged by the
// others. The lines are written for this file.
import { describe, expect, it } from 'vitest';
import { CLASS_RULES, createMiner, type ClassRule } from '../../../src/pipeline/logminer/index.js';

/** How many events the reference engine makes of the lines, with the given rules left out. */
function events(lines: string[], without: ClassRule[]): number {
  return new Set(createMiner({ impl: 'reference', without }).mineBatch('svc', lines).templateIds).size;
}

// each rule's case: lines, the events the full miner makes of them, the events without the rule
const CASES: Record<ClassRule, { lines: string[]; full: number; without: number }> = {
  dates: { lines: ['login from 10.2.2.2 at Tue Mar 12 10:01:02 2024', 'login from 10.2.2.3 at Wed Mar 13 11:01:02 2024'], full: 1, without: 2 },
  fields: { lines: ['auth failure; uid=0 user=root', 'session started for user alice', 'session started for user bob'], full: 2, without: 3 },
  optional: { lines: ['tunnel 10.1.1.1:443 closed, 512 bytes out, lasted 00:05', 'tunnel 10.1.1.2:443 closed, 1931 bytes (1.88 KB) out, lasted 00:12'], full: 1, without: 2 },
  names: { lines: ['Launching loader initialization.', 'Launching loader finalization.'], full: 2, without: 1 },
};

describe('log miner: leaving out a class rule for measurement', () => {
  for (const rule of CLASS_RULES) {
    it(`without ${rule}, its lines group the other way; the other rules leave them as the full miner does`, () => {
      const c = CASES[rule];
      expect(events(c.lines, [])).toBe(c.full);
      expect(events(c.lines, [rule])).toBe(c.without);
      expect(events(c.lines, CLASS_RULES.filter((r) => r !== rule))).toBe(c.full);
    });
  }

  it('is the reference engine\'s only: the WASM engine refuses it', () => {
    expect(() => createMiner({ impl: 'wasm', without: ['dates'] })).toThrow(/reference/);
    expect(() => createMiner({ without: ['names'] })).toThrow(/reference/);
  });
});
