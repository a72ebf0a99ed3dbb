// docs/configuration.md, written from SETTINGS so that the reference cannot drift from the settings
// the server accepts. `npm run docs:config` writes it; test/docs/configuration.test.ts fails when the
// file is not what this renders now.
import { CLIENT_ENV, SETTINGS } from './config.js';

/** A table cell: pipes would end the cell, newlines the row. */
const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

/** The whole of docs/configuration.md. */
export function configurationMarkdown(): string {
  const rows = SETTINGS.map((s) => {
    const def = s.default === '' ? 'unset' : '`' + s.default + '`';
    return `| \`${s.env}\` | ${def} | ${cell(s.doc)} |`;
  });
  return [
    '# Configuration',
    '',
    '<!-- Generated from SETTINGS in src/core/config.ts by `npm run docs:config`; do not edit by hand. -->',
    '',
    'The server reads these environment variables and validates them at start: a bad value or an',
    'unknown `SVC_*` name stops it with a message that names the variable (the value of a secret is',
    'not shown).',
    '',
    '| variable | default | meaning |',
    '|---|---|---|',
    ...rows,
    '',
    `The \`tds\` client reads ${CLIENT_ENV.map((v) => '`' + v + '`').join(', ')} (\`tds --help\` describes them); the`,
    'server accepts them in its environment too.',
    '',
  ].join('\n');
}
