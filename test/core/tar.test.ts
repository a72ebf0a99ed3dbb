// The snapshot's tar: what writeTar writes, GNU tar reads (and the reverse); readTar refuses every
// header that is cut short, miscounted, unsafe (a path, `..`, a link, a device) or repeated, and
// never crashes on hostile bytes.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTar, TarError, writeTar } from '../../src/core/tar.js';

/** A ustar header written here, independently of writeTar, with any name and type. */
function header(name: string, size: number, type = '0'): Buffer {
  const h = Buffer.alloc(512);
  h.write(name, 0, 'latin1');
  h.write('0000644\0', 100);
  h.write('0000000\0', 108);
  h.write('0000000\0', 116);
  h.write(size.toString(8).padStart(11, '0') + '\0', 124);
  h.write('00000000000\0', 136);
  h.write('        ', 148);
  h.write(type, 156);
  h.write('ustar\u000000', 257);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148);
  return h;
}
const member = (name: string, data: string, type = '0') => {
  const d = Buffer.from(data);
  return Buffer.concat([header(name, d.length, type), d, Buffer.alloc((512 - (d.length % 512)) % 512)]);
};
const end = Buffer.alloc(1024);

describe('tar', () => {
  it('reads back what it writes, sizes on and off the block boundary', () => {
    const entries = [
      { name: 'manifest.json', data: Buffer.from('{"a":1}') },
      { name: 'empty.parquet', data: Buffer.alloc(0) },
      { name: 'block.parquet', data: Buffer.alloc(512, 7) },
      { name: 'big.parquet', data: Buffer.alloc(70_000, 3) },
    ];
    expect(readTar(writeTar(entries)).map((e) => [e.name, Buffer.from(e.data)])).toEqual(entries.map((e) => [e.name, e.data]));
  });

  it('is a tar GNU tar lists and extracts, and reads what GNU tar writes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tds-tar-'));
    try {
      const archive = join(dir, 'a.tar');
      writeFileSync(archive, writeTar([{ name: 'one.parquet', data: Buffer.from('first') }, { name: 'two.parquet', data: Buffer.alloc(1000, 65) }]));
      expect(execFileSync('tar', ['-tf', archive], { encoding: 'utf8' }).trim().split('\n')).toEqual(['one.parquet', 'two.parquet']);
      execFileSync('tar', ['-xf', archive, '-C', dir]);
      expect(readFileSync(join(dir, 'two.parquet'))).toEqual(Buffer.alloc(1000, 65));
      execFileSync('tar', ['--format=ustar', '-cf', join(dir, 'b.tar'), '-C', dir, 'one.parquet', 'two.parquet']);
      expect(readTar(readFileSync(join(dir, 'b.tar'))).map((e) => e.name)).toEqual(['one.parquet', 'two.parquet']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ['a path', member('../../etc/passwd', 'x')],
    ['a directory in the name', member('sub/file.parquet', 'x')],
    ['a dot file', member('.hidden', 'x')],
    ['a symbolic link', member('link.parquet', '', '2')],
    ['a directory', member('dir', '', '5')],
    ['a name given twice', Buffer.concat([member('a.parquet', 'x'), member('a.parquet', 'y')])],
  ])('refuses %s', (_what, body) => {
    expect(() => readTar(Buffer.concat([body, end]))).toThrow(TarError);
  });

  it('refuses a bad checksum, a size past the end and a missing end', () => {
    const bad = member('a.parquet', 'hello');
    bad[0] = 'b'.charCodeAt(0);
    expect(() => readTar(Buffer.concat([bad, end]))).toThrow(/checksum/);
    const long = Buffer.concat([header('a.parquet', 100_000), Buffer.alloc(512), end]);
    expect(() => readTar(long)).toThrow(/truncated/);
    expect(() => readTar(member('a.parquet', 'x'))).toThrow(/truncated/);
  });

  it('writes no unsafe name', () => {
    expect(() => writeTar([{ name: '../x', data: Buffer.alloc(1) }])).toThrow(TarError);
  });

  it('never crashes on hostile bytes: a TarError or members within the input', () => {
    const valid = writeTar([{ name: 'a.parquet', data: Buffer.from('abc') }, { name: 'b.parquet', data: Buffer.alloc(600, 1) }]);
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(valid.length - 1), fc.integer({ min: 0, max: 255 })), { maxLength: 8 }), fc.nat(valid.length), (flips, cut) => {
        const b = Buffer.from(valid).subarray(0, cut);
        for (const [at, v] of flips) if (at < b.length) b[at] = v;
        try {
          for (const e of readTar(b)) expect(e.data.length).toBeLessThanOrEqual(b.length);
        } catch (err) {
          if (!(err instanceof TarError)) throw err;
        }
      }),
      { numRuns: 3000 },
    );
  });
});
