// What the MCP server offers besides tools: a resource listing the queryable tables and their columns,
// derived from the one schema definition (store/schema.ts), and a prompt that walks an agent through
// the triage loop the service is built for.
import { QUERYABLE_TABLES, type Table } from '../store/schema.js';

export const TABLES_URI = 'tds://schema/tables';

export interface TablesDoc {
  rules: string[];
  tables: { name: string; columns: { name: string; type: string; nullable: boolean }[] }[];
}

/** The queryable tables as an agent needs them to write SQL for the query tool. */
export function tablesDoc(tables: readonly Table[] = QUERYABLE_TABLES): TablesDoc {
  return {
    rules: [
      'Exactly one SELECT per call; no WITH/CTE (use a derived-table subquery); only allowlisted read-only functions.',
      'Tables may be named bare, as lake.<table> or main.<table>.',
      "`timestamp` is TIMESTAMP in UTC without time zone; bound it with literals, e.g. timestamp >= TIMESTAMP '2025-01-01 00:00:00' (now()-based bounds read every row).",
      'Attribute columns (*_attributes) hold JSON text: read them with json_extract_string(span_attributes, \'$."http.route"\').',
      'svc_spans.status_code is the OTLP enum (2 = error); is_error is the same as a boolean. duration_us is microseconds.',
    ],
    tables: tables.map((t) => ({ name: t.name, columns: t.columns.map((c) => ({ name: c.name, type: c.type, nullable: !c.required })) })),
  };
}

export const TRIAGE_PROMPT = {
  name: 'triage',
  title: 'Triage a service',
  description: 'Walks through the loop: services → diagnose → follow drill_down_sql through query → confirm with a trace.',
  arguments: [
    { name: 'service', description: 'the service to look at; leave empty to start from the list of services and anomalies', required: false },
    { name: 'last_minutes', description: 'how far back to look (default 15)', required: false },
  ],
} as const;

/** The triage prompt's text for a service (or none) and a window in minutes. */
export function triageText(service: string | undefined, lastMinutes: string | undefined): string {
  const minutes = lastMinutes && /^\d+$/.test(lastMinutes) && Number(lastMinutes) > 0 ? Number(lastMinutes) : 15;
  const target = service ? `the service "${service}"` : 'whichever service is in trouble';
  return [
    `Find out what is wrong with ${target} over the last ${minutes} minutes, using the Telemetry Diagnosis Service tools. Work from evidence, not guesses:`,
    '',
    `1. Call list_services to see the exact service names${service ? ` and check "${service}" is among them` : ''}. ` +
      `${service ? '' : `Then call get_anomalies with last_minutes ${Math.max(minutes, 60)} to see which services shifted for the worse; pick the highest-ranked service. `}`,
    `2. Call diagnose with services [${service ? JSON.stringify(service) : '"<that service>"'}] and last_minutes ${minutes}. Read findings in order: the first is the most likely cause, ` +
      'and its `service` may be a dependency rather than the service you asked about. Note before/after and score. Check coverage for signals that are missing. ' +
      'The answer is the compact view: `omitted` says what was left out, with the SQL (spans, logs) or the diagnose arguments (`full_call`) that fetch it.',
    '3. For the top findings (and any anomalous_operations entry), call query with its drill_down_sql exactly as given; when its answer is truncated, next_sql gives the next rows. ' +
      'The rows are the evidence: error types, status messages, slow spans, log lines. Do not rewrite the SQL unless you need a narrower view; if you write your own, ' +
      "bound `timestamp` with TIMESTAMP '...' literals and do not use WITH (the resource tds://schema/tables lists the columns).",
    '4. When a finding or a row names a trace (exemplar_error_trace_id, trace_id), call get_trace to see where the time went and which span failed first.',
    '5. Call list_alerts with status "firing" to see whether the built-in rules already fired for it.',
    '',
    'Answer with: the service at fault, the operation and signal, when it started, the evidence rows that show it (quote the SQL you ran), and what changed around that time (events: deploys, restarts, new error types or log patterns).',
  ].join('\n');
}
