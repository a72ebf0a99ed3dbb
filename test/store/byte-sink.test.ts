import { describe, expect, it } from 'vitest';
import { ByteSink } from '../../src/store/byte-sink.js';

describe('ByteSink.decimal', () => {
  it('writes every safe integer as String() does, across the 10^8 split and the digit counts', () => {
    const values = [0, 7, -7, 10, 99_999_999, 100_000_000, 100_000_001, -100_000_000, 1_000_000_007, 1_795_775_521_570_000, -1_795_775_521_570_001, 10_000_000_000_000_000 - 1, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER];
    for (let d = 1; d <= 16; d++) values.push(10 ** d, 10 ** d - 1, 10 ** d + 10 ** (d >> 1));
    let x = 12345;
    for (let i = 0; i < 2000; i++) values.push((x = (x * 48271) % 2147483647) * 2 ** (i % 22) + (i % 10), -x);
    const s = new ByteSink(16, 1 << 20);
    for (const v of values) {
      s.n = 0;
      s.decimal(v);
      expect(s.b.toString('latin1', 0, s.n)).toBe(String(v));
    }
    // consecutive timestamps share their high digits (copied from the last one): low parts with leading zeros, then a new high part
    const base = 17_957_755 * 1e8; // µs in 2026
    const seq = [base + 5, base + 99_999_999, base + 10_000_000, base, base + 1e8 + 7, base + 1e8 + 7, base - 1, -(base + 3)];
    for (const v of seq) {
      s.n = 0;
      s.decimal(v);
      expect(s.b.toString('latin1', 0, s.n)).toBe(String(v));
    }
    // appended after what is there, not over it
    s.n = 0;
    s.byte(0x2c);
    s.decimal(1_795_775_521_570_000);
    s.byte(0x2c);
    expect(s.b.toString('latin1', 0, s.n)).toBe(',1795775521570000,');
  });
});
