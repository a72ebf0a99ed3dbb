// README.md is for users: short enough to read through (every reference lives in docs/, the full
// settings table in the generated docs/configuration.md), and standing alone: the set-up commands,
// the CLI's variables, and links that all lead somewhere. A moved or renamed page fails here.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLIENT_ENV } from '../../src/core/config.js';
import { PACKAGE_ROOT } from '../../src/core/paths.js';

const README_MAX_BYTES = 16 * 1024;

const pages = [
  'README.md',
  ...readdirSync(join(PACKAGE_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The relative targets of a page's Markdown links `[text](target)`, outside code blocks and spans. */
function relativeLinks(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  const targets = [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
  return targets.filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith('#'));
}

describe('README.md', () => {
  const readme = readFileSync(join(PACKAGE_ROOT, 'README.md'));

  it(`is at most ${README_MAX_BYTES} bytes`, () => {
    expect(readme.byteLength, 'README.md grew: move reference material to docs/').toBeLessThanOrEqual(README_MAX_BYTES);
  });

  it('gives the two set-up commands and names the CLI variables', () => {
    const text = readme.toString('utf8');
    expect(text).toContain('npm ci && npm start');
    expect(text).toContain('npm ci && npm test');
    for (const v of CLIENT_ENV) expect(text).toContain(`\`${v}\``);
  });

  it('does not point outside the repository', () => {
    expect(readme.toString('utf8')).not.toContain('../shared');
  });
});

describe('relative links in README.md and docs/*.md', () => {
  it.each(pages)('%s: every one leads to a file that exists', (page) => {
    const markdown = readFileSync(join(PACKAGE_ROOT, page), 'utf8');
    const broken = relativeLinks(markdown).filter((target) => {
      const path = decodeURIComponent(target.split('#')[0]!);
      return !existsSync(join(PACKAGE_ROOT, dirname(page), path));
    });
    expect(broken, `${page} links to missing files`).toEqual([]);
  });

  it('the link finder sees links and skips URLs, anchors and code', () => {
    expect(relativeLinks('[a](docs/x.md) [b](https://e.org) [c](#top) `[d](no.md)` [e](../y.md#s "t")')).toEqual([
      'docs/x.md',
      '../y.md#s',
    ]);
  });
});
