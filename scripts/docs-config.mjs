#!/usr/bin/env node
// Writes docs/configuration.md from SETTINGS (src/core/config.ts), through the built
// src/core/settings-doc.ts: run `npm run docs:config`, which builds first.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configurationMarkdown } from '../dist/src/core/settings-doc.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'docs', 'configuration.md');
writeFileSync(out, configurationMarkdown());
console.log(`wrote ${out}`);
