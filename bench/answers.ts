// npm run bench:answers — what an agent pays to read a diagnosis: the bytes and tokens of each answer
// (the full block, the compact view, the MCP diagnose tool's default answer), for one service and for
// ten in one call, on bench:diagnose's store and on a recorded fault. Tokens are counted with
// o200k_base (gpt-tokenizer), one real tokenizer; other models' counts differ by some tens of percent.
// Each compact answer is checked against its full answer: every finding as it is, every lead's SQL
// (findings, incident shifts, operations flagged anomalous, drill_all_sql of spans and logs).
//
// Targets (issue 47), on bench:diagnose's store: the compact view of one service <= 8 KiB, of ten
// services <= 48 KiB, with every finding and lead present.
//
// The recorded fault: a stretch of one day of the Nezha OnlineBoutique recording (EVAL_RECORDED_DIR,
// default the shared nezha-ob copy) from 90 minutes before the injection to 3 minutes after it,
// replayed into a store of its own (cached in EVAL_RECORDED_CACHE, default /tmp/tds-recorded), asked
// about the last 15 minutes to 3 minutes after the injection: the entry service, then the ten
// busiest. ANSWERS_FAULT picks the fault (default 2022-08-22/04:27:03, a network delay on
// cartservice); no recording: that part is skipped. BENCH_DIAGNOSE_DIR as bench:diagnose.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { countTokens } from 'gpt-tokenizer';
import { buildOrReuse, defaultStoreDir, WINDOW_US } from './lib/diagnose-store.js';
import { detectionDone, serveStore } from './lib/diagnose-server.js';
import { serverEnv, type ChildServer } from '../testkit/server.js';
import { missingFromCompact } from '../testkit/compact-check.js';
import { readNezha } from './recorded/nezha.js';
import { loadSplit, serveLoaded, spansIn } from './recorded/replay.js';
import { AFTER_US, windowOf } from './recorded/ask.js';
import { queryVia } from './recorded/floor.js';
import { CORPORA_DIR } from '../src/core/paths.js';
import { apiClient, httpTransport } from '../src/client/api.js';
import { TOOLS, callTool } from '../src/mcp/tools.js';
import { DIAGNOSE_MAX_BYTES } from '../src/mcp/budget.js';

const KiB = 1024;
const ONE_TARGET = 8 * KiB;
const TEN_TARGET = 48 * KiB;

interface Sized {
  label: string;
  bytes: number;
  tokens: number;
  target?: string;
}

async function post(api: string, body: unknown): Promise<{ text: string; value: any }> {
  const r = await fetch(`${api}/v1/diagnose`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`diagnose: HTTP ${r.status}: ${text.slice(0, 300)}`);
  return { text, value: JSON.parse(text) };
}

const sized = (label: string, text: string, target?: string): Sized => ({ label, bytes: Buffer.byteLength(text), tokens: countTokens(text), ...(target ? { target } : {}) });

const findingsOf = (answer: any) => Object.values<any>(answer.results).reduce((n, b) => n + b.findings.length, 0);

/** The answers for `services` over `window`: full, compact, and the MCP diagnose tool's default. */
async function measure(srv: ChildServer, name: string, services: string[], window: { from_ts: number; to_ts: number }, target?: number): Promise<Sized[]> {
  const full = await post(srv.api, { services, ...window });
  const compact = await post(srv.api, { services, ...window, detail: 'findings' });
  const api = apiClient(httpTransport({ baseUrl: srv.api, timeoutMs: 120_000 }));
  const tool = await callTool(TOOLS.find((t) => t.name === 'diagnose')!, { services, ...window }, api, Date.now() * 1000);
  if (!tool.ok) throw new Error(`the MCP diagnose tool: ${JSON.stringify(tool.error)}`);
  const toolText = JSON.stringify(tool.value);
  const gaps = missingFromCompact(full.value, compact.value);
  const cBytes = Buffer.byteLength(compact.text);
  const n = `${services.length} service${services.length > 1 ? 's' : ''}`;
  const kept = findingsOf(tool.value as any);
  const all = findingsOf(compact.value);
  const carried = gaps.length ? `MISSING ${gaps.length}: ${gaps.slice(0, 3).map((g) => g.slice(0, 100)).join('; ')}` : `every finding (${all}) and lead present`;
  return [
    sized(`${name}, ${n}: full`, full.text),
    sized(`${name}, ${n}: compact`, compact.text, `${target ? `<= ${target / KiB} KiB ${cBytes <= target ? 'met' : 'NOT met'}; ` : ''}${carried}`),
    sized(`${name}, ${n}: MCP default`, toolText, `<= ${DIAGNOSE_MAX_BYTES / KiB} KiB ${Buffer.byteLength(toolText) <= DIAGNOSE_MAX_BYTES ? 'met' : 'NOT met'}; ${kept} of ${all} findings`),
  ];
}

function print(rows: Sized[]): void {
  console.log(`${'answer'.padEnd(48)} ${'bytes'.padStart(9)} ${'KiB'.padStart(7)} ${'tokens'.padStart(8)} ${'B/token'.padStart(7)}  target`);
  for (const r of rows) {
    console.log(`${r.label.padEnd(48)} ${String(r.bytes).padStart(9)} ${(r.bytes / KiB).toFixed(1).padStart(7)} ${String(r.tokens).padStart(8)} ${(r.bytes / r.tokens).toFixed(2).padStart(7)}  ${r.target ?? ''}`);
  }
}

async function benchStore(): Promise<void> {
  const dir = defaultStoreDir();
  const { meta } = await buildOrReuse(dir, (m) => console.log(m));
  const srv = await serveStore(dir);
  try {
    await detectionDone(srv, 15 * 60_000);
    const window = { from_ts: meta.endUs - WINDOW_US, to_ts: meta.endUs };
    console.log(`\nbench:diagnose's store (${dir}), the 15 minutes before its end`);
    print([...(await measure(srv, meta.service, [meta.service], window, ONE_TARGET)), ...(await measure(srv, 'all', meta.services, window, TEN_TARGET))]);
  } finally {
    await srv.stop();
  }
}

async function recordedFault(): Promise<void> {
  const root = process.env['EVAL_RECORDED_DIR'] ?? join(CORPORA_DIR, 'rca', 'nezha-ob');
  if (!existsSync(join(root, 'rca_data'))) {
    console.log(`\nno recording at ${root} (set EVAL_RECORDED_DIR): the recorded fault is skipped`);
    return;
  }
  const id = process.env['ANSWERS_FAULT'] ?? '2022-08-22/04:27:03';
  const recording = readNezha(root, 'nezha-ob');
  const split = recording.splits.find((s) => s.faults.some((f) => f.id === id));
  const fault = split?.faults.find((f) => f.id === id);
  if (!split || !fault) throw new Error(`no fault ${id} in ${root}`);
  const from = fault.injectUs + AFTER_US - WINDOW_US - 90 * 60_000_000;
  const to = fault.injectUs + AFTER_US;
  const { dir, loaded } = await loadSplit(split, {
    cacheDir: process.env['EVAL_RECORDED_CACHE'] ?? '/tmp/tds-recorded',
    variant: `answers-${id.split('/')[1]!.replaceAll(':', '')}`,
    keep: (s, e) => e >= from && s <= to,
    log: (m) => console.log(m),
  });
  const srv = await serveLoaded(dir, serverEnv());
  try {
    const q = queryVia(srv.api);
    const busiest = (await q(`SELECT service_name AS s, count(*) AS n FROM svc_spans GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10`)).map((r) => String(r['s']));
    const entry = String((await q(`SELECT service_name AS s FROM svc_spans WHERE coalesce(parent_span_id, '') = '' GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`))[0]?.['s'] ?? '');
    const w = windowOf('last_15m', fault, loaded.shiftUs);
    const window = { from_ts: Math.round(w.fromUs), to_ts: Math.round(w.toUs) };
    console.log(`\nrecorded fault ${fault.id} (${fault.type} on ${fault.service}; ${spansIn(loaded, fault.injectUs - WINDOW_US + AFTER_US, fault.injectUs + AFTER_US)} spans in the window), the 15 minutes to 3 minutes after the injection`);
    print([...(await measure(srv, entry, [entry], window)), ...(await measure(srv, 'ten busiest', busiest, window))]);
  } finally {
    await srv.stop();
  }
}

async function main(): Promise<void> {
  await benchStore();
  await recordedFault();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
