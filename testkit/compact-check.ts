// What a compact view (`"detail": "findings"`) must carry of its full block, checked the same way by
// bench:answers and the tests: every finding as it is, and the SQL of every lead — the findings'
// (incident shifts' too), the operations flagged anomalous, drill_all_sql of spans and logs.

/** Every SQL string of a full block that its compact view must carry. */
export function leadsOf(block: any): string[] {
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) (/_sql$/.test(k) && typeof x === 'string' ? out.push(x) : walk(x));
  };
  walk([block.findings, block.operation_summaries.filter((o: any) => o.is_anomalous), block.spans.drill_all_sql, block.logs.drill_all_sql]);
  return out;
}

/** What the compact answer misses of the full one, one line each: a service without a view, findings not carried as they are, leads whose SQL is absent. */
export function missingFromCompact(full: any, compact: any): string[] {
  const out: string[] = [];
  for (const [s, block] of Object.entries<any>(full.results)) {
    const c = compact.results[s];
    if (!c) {
      out.push(`${s}: no compact view`);
      continue;
    }
    if (JSON.stringify(c.findings) !== JSON.stringify(block.findings)) out.push(`${s}: findings differ`);
    const text = JSON.stringify(c);
    for (const sql of leadsOf(block)) if (!text.includes(JSON.stringify(sql))) out.push(`${s}: lead missing: ${sql}`);
  }
  return out;
}
