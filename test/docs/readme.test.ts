// README.md is the operator's reference: its configuration table must list every setting the server
// reads, with the default the code really uses, and give the two set-up commands.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLIENT_ENV, SETTINGS } from '../../src/core/config.js';
import { PACKAGE_ROOT } from '../../src/core/paths.js';

const readme = readFileSync(join(PACKAGE_ROOT, 'README.md'), 'utf8');

describe('README.md', () => {
  it('documents every setting with its real default', () => {
    for (const s of SETTINGS) {
      const row = readme.split('\n').find((l) => l.startsWith(`| \`${s.env}\` |`));
      expect(row, `${s.env} is missing from the configuration table`).toBeDefined();
      // An empty default reads "unset" in the table.
      expect(row).toContain(s.default === '' ? '| unset |' : `| \`${s.default}\` |`);
    }
  });

  it('names the CLI variables and the two set-up commands', () => {
    for (const v of CLIENT_ENV) expect(readme).toContain(`\`${v}\``);
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('npm ci && npm test');
  });
});
