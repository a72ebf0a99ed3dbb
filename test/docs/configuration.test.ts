// docs/configuration.md is generated from SETTINGS: a setting added or changed without
// `npm run docs:config` fails here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SETTINGS } from '../../src/core/config.js';
import { PACKAGE_ROOT } from '../../src/core/paths.js';
import { configurationMarkdown } from '../../src/core/settings-doc.js';

const doc = readFileSync(join(PACKAGE_ROOT, 'docs', 'configuration.md'), 'utf8');

describe('docs/configuration.md', () => {
  it('is what `npm run docs:config` writes from SETTINGS now', () => {
    expect(doc, 'docs/configuration.md is stale: run `npm run docs:config`').toBe(configurationMarkdown());
  });

  it('has one row per setting, with its default and description', () => {
    const rows = doc.split('\n').filter((l) => l.startsWith('| `'));
    expect(rows).toHaveLength(SETTINGS.length);
    for (const s of SETTINGS) {
      const row = rows.find((l) => l.startsWith(`| \`${s.env}\` |`));
      expect(row, `${s.env} is missing`).toBeDefined();
      expect(row).toContain(s.default === '' ? '| unset |' : `| \`${s.default}\` |`);
      expect(row).toContain(s.doc.slice(0, 40));
    }
  });
});
