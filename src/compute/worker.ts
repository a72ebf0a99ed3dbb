// The pool's worker: one entry point, dispatching on the task's kind. Module state (WASM instances,
// detectors) is created once per thread and reused across tasks.
import { runOtlp } from '../pipeline/otlp-task.js';
import type { OtlpTask, IngestResult } from '../pipeline/tasks.js';
import { runDetect, type DetectOutput, type DetectTask } from '../detect/detect-task.js';
import { runProfile, type ProfileTask } from '../pipeline/profile-task.js';
import { runLogs, runLogsFlush, runLogsInit, type LogsFlushTask, type LogsInitTask } from '../pipeline/logs-task.js';
import type { EncodedPart } from '../store/writer.js';
import { workerData } from 'piscina';
import { lowerThreadPriority } from './priority.js';

if ((workerData as { lowPriority?: boolean } | undefined)?.lowPriority) lowerThreadPriority();

export type Task = OtlpTask | ProfileTask | DetectTask | LogsInitTask | LogsFlushTask;

// Results come back by structured clone: for ingest, a memcpy of the CSV (~1 KB a span), small next
// to producing it.
export default function handle(task: Task): IngestResult | DetectOutput[] | EncodedPart[] | number {
  switch (task.kind) {
    case 'otlp':
      // Logs go to the single-thread logs pool, whose one miner owns the template ids.
      return task.signal === 'logs' ? runLogs(task) : runOtlp(task);
    case 'logs-init':
      return runLogsInit(task);
    case 'logs-flush':
      return runLogsFlush();
    case 'profile':
      return runProfile(task);
    case 'detect':
      return runDetect(task);
  }
}
