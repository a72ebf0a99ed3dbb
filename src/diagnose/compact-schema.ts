// The compact view of a diagnosis (`"detail": "findings"`) as a schema value with its TypeScript
// type: per service what an agent acts on first — the ranked findings with their SQL, the operations
// flagged anomalous, coverage and events — and, for every other part of the full block, how many
// entries were left out and the SQL or the call that fetches them. Published in openapi.json beside
// the full block (block-schema.ts), whose finding and coverage schemas it reuses as they are.
import { arr, bool, component, dict, int, int64, nnum, nstr, num, obj, oneOf, opt, str, Type, type Static } from '../core/schema.js';
import { MAX_SERVICES } from './request.js';
import { Coverage, DiagnosisEvent, DiagnosisWindow, Finding } from './block-schema.js';

export const AnomalousOperation = component(
  'AnomalousOperation',
  obj({
    operation: str(),
    anomaly_reason: nstr(),
    count: int(),
    error_pct: num(),
    baseline_error_pct: nnum('null when there is no baseline'),
    duration_p95_us: num(),
    baseline_p95_us: nnum('null when there is no baseline'),
    exemplar_error_trace_id: nstr(),
    drill_down_sql: str('ready-to-run SQL for POST /v1/query; send it verbatim'),
  }),
);

const Left = (what: string, sql = false) =>
  opt(
    obj(
      sql ? { count: int(), sql: str('one statement for POST /v1/query that fetches them (the newest 1,000)') } : { count: int() },
      `${what}; absent when none was left out`,
    ),
  );

export const OmittedParts = component(
  'OmittedParts',
  obj(
    {
      full_call: obj(
        {
          detail: oneOf(['full']),
          services: Type.Array(str(), { minItems: 1, maxItems: 1 }),
          from_ts: int64(),
          to_ts: int64(),
        },
        'the arguments of POST /v1/diagnose (or of the MCP diagnose tool) that give the full block of this service and window: every part below without `sql` is in it',
      ),
      findings: Left('findings the budget dropped, and those past the full block\'s cap of 20 (findings_total)'),
      anomalous_operations: Left('operations flagged anomalous that the budget dropped'),
      events: Left('events the budget dropped'),
      operations: Left('operations not flagged anomalous (operation_summaries; past its cap of 50 too: operations_total)'),
      spans: Left("the window's spans of the service (the full block has a bounded sample)", true),
      logs: Left("the window's log records of the service (the full block has a bounded sample)", true),
      log_patterns: Left('log patterns (log_patterns_total)'),
      log_counters: Left('log counters'),
      metrics: Left('metric summaries (metrics_total)'),
      profiles: Left('profile hot spots (profiles_total)'),
      gen_ai: Left('gen_ai models'),
      dependencies: Left('services this one calls (context.dependencies)'),
      dependents: Left('services that call this one (context.dependents)'),
    },
    'what this view leaves out of the full block, part by part',
  ),
);

export const CompactBlock = component(
  'CompactBlock',
  obj({
    service: str(),
    window: DiagnosisWindow,
    findings: arr(Finding, 'ranked, most important first; the same entries as the full block\'s, the lowest-ranked dropped first when a budget is set'),
    anomalous_operations: arr(AnomalousOperation, 'the operations the full block flags is_anomalous, strongest first'),
    coverage: Coverage,
    events: arr(DiagnosisEvent),
    omitted: OmittedParts,
  }),
);

export const AnswerBudget = component(
  'AnswerBudget',
  obj({
    max_bytes: Type.Unsafe<number | null>({ type: ['integer', 'null'], description: 'the budget asked for; null for none' }),
    bytes: int('the size of this answer as sent: UTF-8 bytes of its JSON'),
    dropped: int('entries dropped to fit (findings, anomalous operations, events); each service\'s `omitted` says which'),
    fits: bool('false when even the answer with nothing left to drop is larger than max_bytes'),
  }),
);

export const CompactDiagnoseResponse = component(
  'CompactDiagnoseResponse',
  obj({
    detail: oneOf(['findings']),
    results: dict(CompactBlock, `the compact view per successfully diagnosed service (at most ${MAX_SERVICES})`),
    errors: dict(str(), 'service → message for services whose diagnosis failed; empty when all succeeded'),
    budget: AnswerBudget,
  }),
);

export type AnomalousOperation = Static<typeof AnomalousOperation>;
export type OmittedParts = Static<typeof OmittedParts>;
export type CompactBlock = Static<typeof CompactBlock>;
export type AnswerBudget = Static<typeof AnswerBudget>;
export type CompactDiagnoseResponse = Static<typeof CompactDiagnoseResponse>;
