// Golden tests for the three ways templates broke on logs nobody tuned them on, run against each
// engine. Every line here was written for this file; the expected patterns are written by hand.
//  1. A field with a few word values taken for a constant, so one event splits per value (weekday and
//     month names inside a date, user names, ...).
//  2. An optional part inside a variable (`512 bytes` / `512 bytes (0.5 KB)`, `00:05` / `<1 sec`)
//     splitting an event.
//  3. Events that differ in one meaningful word merging (`initialization.` / `finalization.`,
//     `HTTPS` / `SOCKS5`).
import { describe, expect, it } from 'vitest';
import { createMiner, type LogMiner } from '../../../src/pipeline/logminer/index.js';
import { goldenEvents } from './golden-events.js';

export function classesSuite(impl: 'wasm' | 'reference'): void {
  const make = (): LogMiner => createMiner({ impl });
  const golden = (events: { pattern: string; lines: string[] }[], batch = 1000): LogMiner => goldenEvents(make, events, batch);

  describe(`log events (${impl}), class 1: a field with a few word values is one event`, () => {
    it('the weekday and month names of a date written in words are values', () => {
      for (const batch of [1000, 1]) golden([
        {
          pattern: 'accepted login from <*> at <*> <*> <*> <*>:<*>:<*> <*>',
          lines: [
            'accepted login from 10.2.2.2 at Tue Mar 12 10:01:02 2024',
            'accepted login from 10.2.2.3 at Wed Mar 13 11:01:02 2024',
            'accepted login from 10.2.2.4 at Sat Apr 6 09:00:00 2024',
            'accepted login from 10.2.2.9 at Sun Apr 7 23:59:59 2024',
            'accepted login from 10.2.2.2 at Tue Mar 12 10:01:05 2024',
          ],
        },
        {
          pattern: 'report for <*>, <*> <*>, <*> sent to <*> readers',
          lines: ['report for Monday, March 4, 2024 sent to 12 readers', 'report for FRIDAY, JUNE 7, 2024 sent to 3 readers', 'report for Sunday, January 5, 2025 sent to 40 readers'],
        },
        {
          pattern: 'snapshot of vol-<*> taken <*> <*> <*> <*>:<*>:<*> <*> <*>',
          lines: ['snapshot of vol-7 taken Fri Nov 3 04:05:06 CET 2023', 'snapshot of vol-2 taken Mon Dec 11 22:00:00 UTC 2023', 'snapshot of vol-7 taken Thu Feb 1 00:00:01 CEST 2024'],
        },
      ], batch);
    });

    it('a weekday or month name outside a date stays a word', () => {
      const m = make();
      const r = m.mineBatch('svc', ['cache may be stale for key 17', 'cache may be stale for key 18', 'rotation due on Sunday for key 3']);
      expect(m.template(r.templateIds[0]!)!.pattern).toBe('cache may be stale for key <*>');
      expect(m.template(r.templateIds[2]!)!.pattern).toBe('rotation due on Sunday for key <*>');
    });
  });
}
