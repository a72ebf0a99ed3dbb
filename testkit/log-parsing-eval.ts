// Reading the Loghub-2k benchmark (../shared/corpora/loghub) for the evaluation, the benchmark and the
// conformance tests. Only the dataset's `log_format` is used to cut the message out of a raw line
// (as logpai/logparser's generate_logformat_regex does); the per-dataset regexes and thresholds in
// settings.txt are Drain's hand tuning and are deliberately ignored.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CORPORA_DIR } from '../src/core/paths.js';
import { createMiner, type CreateMinerOptions } from '../src/pipeline/logminer/index.js';

export const LOGHUB_DIR = join(CORPORA_DIR, 'loghub');

export interface LoghubDataset {
  name: string;
  /** message (the format's <Content>) of each line */
  contents: string[];
  /** ground-truth event id and template per line (corrected_loghub2, else corrected_icse22, else original) */
  eventIds: string[];
  templates: string[];
  truth: 'corrected_loghub2' | 'corrected_icse22' | 'original';
}

export function loghubAvailable(): boolean {
  return existsSync(join(LOGHUB_DIR, 'settings.txt'));
}

/** Dataset name → log_format, from settings.txt. */
export function loghubFormats(): Map<string, string> {
  const text = readFileSync(join(LOGHUB_DIR, 'settings.txt'), 'utf8');
  const out = new Map<string, string>();
  let cur = '';
  for (const line of text.split(/\r?\n/)) {
    const sec = /^\[(\w+)\]\s*$/.exec(line);
    if (sec) cur = sec[1]!;
    const f = /^log_format\s*=\s?(.*)$/.exec(line);
    if (f && cur) out.set(cur, f[1]!);
  }
  return out;
}

/** logparser's generate_logformat_regex: <X> → (?<X>.*?), runs of spaces → \s+, anchored. */
export function formatRegex(format: string): RegExp {
  const parts = format.split(/(<[^<>]+>)/);
  let re = '';
  for (let k = 0; k < parts.length; k++) {
    if (k % 2 === 0) re += parts[k]!.replace(/ +/g, '\\s+');
    else re += `(?<${parts[k]!.slice(1, -1)}>.*?)`;
  }
  return new RegExp('^' + re + '$');
}

/** Minimal RFC 4180 CSV parser (quoted fields, doubled quotes, CRLF). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let q = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (q) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else q = false;
      } else field += c;
    } else if (c === '"') q = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

export function loadLoghub(name: string, format: string): LoghubDataset {
  const dir = join(LOGHUB_DIR, name);
  let truth: LoghubDataset['truth'] = 'original';
  let csv = join(dir, `${name}_2k.log_structured.csv`);
  for (const t of ['corrected_loghub2', 'corrected_icse22'] as const) {
    const p = join(dir, t, `${name}_2k.log_structured_corrected.csv`);
    if (existsSync(p)) {
      truth = t;
      csv = p;
      break;
    }
  }
  const rows = parseCsv(readFileSync(csv, 'utf8'));
  const header = rows[0]!;
  const iId = header.indexOf('EventId');
  const iTpl = header.indexOf('EventTemplate');
  const re = formatRegex(format);
  const raw = readFileSync(join(dir, `${name}_2k.log`), 'utf8').split(/\r?\n/);
  if (raw[raw.length - 1] === '') raw.pop();
  const contents: string[] = [];
  const eventIds: string[] = [];
  const templates: string[] = [];
  for (let i = 0; i < raw.length; i++) {
    const m = re.exec(raw[i]!.trim());
    const r = rows[i + 1];
    if (!m || !r) continue; // logparser skips lines its format does not match
    contents.push(m.groups!['Content']!);
    eventIds.push(r[iId]!);
    templates.push(r[iTpl]!);
  }
  return { name, contents, eventIds, templates, truth };
}

export function loadAllLoghub(): LoghubDataset[] {
  const out: LoghubDataset[] = [];
  for (const [name, fmt] of loghubFormats()) if (existsSync(join(LOGHUB_DIR, name))) out.push(loadLoghub(name, fmt));
  return out;
}

/**
 * PA normalisation, applied to both sides: whitespace runs collapsed and trimmed, then repeatedly
 * `<*>X<*>` → `<*>` for X in {"", ".", ":", "/", "@", "#"} (Loghub-2.0's consecutive-variable rules).
 */
export function normalizeTemplate(t: string): string {
  let s = t.trim().replace(/\s+/g, ' ');
  for (;;) {
    const p = s.replace(/<\*>(?:[.:/@#]?)<\*>/g, '<*>');
    if (p === s) return s;
    s = p;
  }
}

/** GA: a line is correct when its predicted group is exactly its ground-truth event's set of lines. */
export function groupingAccuracy(pred: ArrayLike<number>, truth: readonly string[]): number {
  const truthSize = new Map<string, number>();
  for (const t of truth) truthSize.set(t, (truthSize.get(t) ?? 0) + 1);
  const groups = new Map<number, number[]>();
  for (let i = 0; i < truth.length; i++) {
    const g = groups.get(pred[i]!);
    if (g) g.push(i);
    else groups.set(pred[i]!, [i]);
  }
  let correct = 0;
  for (const lines of groups.values()) {
    const t = truth[lines[0]!]!;
    if (lines.every((i) => truth[i] === t) && truthSize.get(t) === lines.length) correct += lines.length;
  }
  return correct / truth.length;
}


export interface MinedDataset {
  /** template id per line, merges followed to the template that absorbed it */
  ids: Float64Array;
  /** final pattern per id (live, evicted or merged-into) */
  patterns: Map<number, string>;
  ga: number;
  /** after normalizeTemplate on both sides */
  pa: number;
  /** whitespace-only normalisation */
  paExact: number;
}

/**
 * Mines a dataset with one fresh miner (one batch, one service) and scores it. A line mined into a
 * template that later merged into another counts as that other template's line: the merge says
 * they are one event, as a reader of svc_log_templates following merged_into would see them.
 */
export function mineDataset(ds: LoghubDataset, opts: CreateMinerOptions = {}): MinedDataset {
  const miner = createMiner(opts);
  const res = miner.mineBatch(ds.name, ds.contents);
  const patterns = new Map<number, string>();
  const into = new Map<number, number>();
  for (const t of res.evicted) {
    patterns.set(t.template_id, t.pattern);
    if (t.merged_into !== null) into.set(t.template_id, t.merged_into);
  }
  for (const t of miner.templates(ds.name)) patterns.set(t.template_id, t.pattern);
  const ids = res.templateIds.map((id) => {
    while (into.has(id)) id = into.get(id)!;
    return id;
  });
  let ok = 0;
  let exact = 0;
  const ws = (s: string): string => s.trim().replace(/\s+/g, ' ');
  for (let i = 0; i < ids.length; i++) {
    const p = patterns.get(ids[i]!) ?? '';
    if (ws(p) === ws(ds.templates[i]!)) exact++;
    if (normalizeTemplate(p) === normalizeTemplate(ds.templates[i]!)) ok++;
  }
  return { ids, patterns, ga: groupingAccuracy(ids, ds.eventIds), pa: ok / ids.length, paExact: exact / ids.length };
}
