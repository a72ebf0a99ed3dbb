// Which request bodies may be moved to a decode worker (transferred, detaching them here) rather
// than copied: only those that own their ArrayBuffer, so nothing else is detached with them.
import { describe, expect, it } from 'vitest';
import { ownsBuffer } from '../../src/receivers/ingest.js';

describe('ownsBuffer', () => {
  it('moves a body that spans its whole buffer, or all of it past a gRPC frame header', () => {
    expect(ownsBuffer(new Uint8Array(10_000))).toBe(true);
    expect(ownsBuffer(Buffer.alloc(10_005).subarray(5))).toBe(true);
    expect(ownsBuffer(Buffer.concat([Buffer.alloc(5000), Buffer.alloc(5000)]))).toBe(true);
  });

  it('copies a view that shares its buffer with other bytes', () => {
    const big = new Uint8Array(20_000);
    expect(ownsBuffer(big.subarray(6))).toBe(false); // more than a frame header before it
    expect(ownsBuffer(big.subarray(0, 19_999))).toBe(false); // bytes after it
    expect(ownsBuffer(big.subarray(5, 10_005))).toBe(false);
  });

  it('copies small bodies, which may be slices of the shared Buffer pool', () => {
    const pooled = Buffer.allocUnsafe(3000);
    expect(pooled.buffer.byteLength).toBeGreaterThan(pooled.byteLength); // a pool slice indeed
    expect(ownsBuffer(pooled)).toBe(false);
    expect(ownsBuffer(new Uint8Array(4096))).toBe(false);
  });

  it('copies views of shared memory, which cannot be transferred', () => {
    expect(ownsBuffer(new Uint8Array(new SharedArrayBuffer(10_000)))).toBe(false);
  });
});
