// The corpus guard: skip locally, fail under CI.
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CORPORA_DIR } from '../../src/core/paths.js';
import { corpusPresent } from './corpora.js';

const absent = join(CORPORA_DIR, 'no-such-corpus-' + process.pid);

describe('corpusPresent', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('is true for a path that exists', () => {
    expect(corpusPresent(__dirname)).toBe(true);
  });

  it('is false, with a warning, for an absent corpus outside CI', () => {
    vi.stubEnv('CI', '');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    expect(corpusPresent(absent)).toBe(false);
    expect(warn.mock.calls[0]?.[0]).toContain('no-such-corpus-');
    warn.mockRestore();
  });

  it('throws for an absent corpus under CI', () => {
    vi.stubEnv('CI', 'true');
    expect(() => corpusPresent(absent)).toThrow(/no-such-corpus-.*CI must run with the corpora/);
  });
});
