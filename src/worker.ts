// The pool's worker: one entry point, dispatching on the task's kind. Module state (WASM instances,
// detectors) is created once per thread and reused across tasks.
import { runOtlp } from './pipeline/otlp-task.js';
import type { OtlpTask, IngestResult } from './pipeline/tasks.js';
import { runDetect, type DetectOutput, type DetectTask } from './detect/detect-task.js';
import { runProfile, type ProfileTask } from './pipeline/profile-task.js';
import {
  runLogs,
  runLogsAdopt,
  runLogsFlush,
  runLogsInit,
  runLogsReserve,
  runLogsUnsent,
  type LogsAdoptTask,
  type LogsFlushTask,
  type LogsInitTask,
  type LogsReserveTask,
  type LogsUnsentTask,
} from './pipeline/logs-task.js';
import type { EncodedPart } from './store/writer.js';
import { move, transferableSymbol, valueSymbol, workerData } from 'piscina';
import { lowerThreadPriority } from './compute/priority.js';

if ((workerData as { lowPriority?: boolean } | undefined)?.lowPriority) lowerThreadPriority();

export type Task = OtlpTask | ProfileTask | DetectTask | LogsInitTask | LogsFlushTask | LogsUnsentTask | LogsReserveTask | LogsAdoptTask;

export default function handle(task: Task): IngestResult | DetectOutput[] | EncodedPart[] | number {
  switch (task.kind) {
    case 'otlp':
      // Logs go to the single-thread logs pool, whose one miner owns the template ids.
      return transferred(task.signal === 'logs' ? runLogs(task) : runOtlp(task));
    case 'logs-init':
      return runLogsInit(task);
    case 'logs-flush':
      return transferred(runLogsFlush(task));
    case 'logs-unsent':
      return runLogsUnsent(task);
    case 'logs-reserve':
      return runLogsReserve(task);
    case 'logs-adopt':
      return runLogsAdopt(task);
    case 'profile':
      return transferred(runProfile(task));
    case 'detect':
      return runDetect(task);
  }
}

/**
 * The result with its CSV buffers transferred, not cloned (~1 KB a span, cloned twice otherwise).
 * Only buffers a part's view covers whole are moved; the rest is cloned.
 */
function transferred<T extends IngestResult | EncodedPart[]>(result: T): T {
  const parts = Array.isArray(result) ? result : result.ok ? result.parts : [];
  const buffers = new Set<ArrayBuffer>();
  for (const { csv } of parts) if (csv.byteOffset === 0 && csv.byteLength === csv.buffer.byteLength && csv.buffer instanceof ArrayBuffer) buffers.add(csv.buffer);
  if (!buffers.size) return result;
  return move({ [transferableSymbol]: [...buffers], [valueSymbol]: result } as unknown as Parameters<typeof move>[0]) as unknown as T;
}
