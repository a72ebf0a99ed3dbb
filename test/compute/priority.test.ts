import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { POOL_THREAD_NICE } from '../../src/compute/priority.js';

// Field 19 of /proc/<pid>/task/<tid>/stat is the thread's nice value.
const niceOf = (tid: number): number => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);

describe.runIf(process.platform === 'linux')('pool thread priority', () => {
  it('lowers the calling thread only, not the process', async () => {
    const before = niceOf(process.pid);
    const url = new URL('../../dist/src/compute/priority.js', import.meta.url).href;
    const worker = new Worker(
      `import(${JSON.stringify(url)}).then((m) => { const ok = m.lowerThreadPriority(); const { readlinkSync } = require('node:fs'); ` +
        `require('node:worker_threads').parentPort.postMessage({ ok, tid: Number(readlinkSync('/proc/thread-self').split('/').pop()) }); setTimeout(() => {}, 500); });`,
      { eval: true },
    );
    const { ok, tid } = await new Promise<{ ok: boolean; tid: number }>((resolve, reject) => worker.once('message', resolve).once('error', reject));
    try {
      // An unprivileged process already nicer than that cannot lower its nice value: nothing changes.
      expect(ok).toBe(before <= POOL_THREAD_NICE || process.getuid?.() === 0);
      if (ok) expect(niceOf(tid)).toBe(POOL_THREAD_NICE);
      expect(niceOf(process.pid)).toBe(before);
    } finally {
      await worker.terminate();
    }
  });
});
