// Progress of `tds replay` on stderr (stdout carries the result): a bar redrawn in place on a
// terminal, JSON lines otherwise (one a second, and one per malformed line or file).
import type { Writer } from '../context.js';
import type { Counts } from './send.js';
import type { Problem } from './read.js';

export interface ProgressState {
  filesDone: number;
  files: number;
  bytesDone: number;
  bytes: number;
  records: Counts;
}

const BAR = 30;

export class Progress {
  private readonly started = performance.now();
  private last = -Infinity;
  private drawn = false;

  constructor(
    private readonly out: Writer,
    private readonly state: () => ProgressState,
  ) {}

  private get tty(): boolean {
    return this.out.isTTY === true;
  }

  /** Writes the progress if it is time to (every 200 ms on a terminal, every second otherwise), or now with `force`. */
  tick(force = false): void {
    const now = performance.now();
    if (!force && now - this.last < (this.tty ? 200 : 1000)) return;
    this.last = now;
    const s = this.state();
    const elapsed = (now - this.started) / 1000;
    const rate = elapsed > 0 ? Math.round(s.records.acknowledged / elapsed) : 0;
    const fraction = s.bytes > 0 ? Math.min(1, s.bytesDone / s.bytes) : 1;
    if (this.tty) {
      const full = Math.round(fraction * BAR);
      const line = `[${'#'.repeat(full)}${'.'.repeat(BAR - full)}] ${(fraction * 100).toFixed(0).padStart(3)}%  files ${s.filesDone}/${s.files}  records ${s.records.sent.toLocaleString('en-US')} sent, ${s.records.acknowledged.toLocaleString('en-US')} acknowledged, ${s.records.rejected.toLocaleString('en-US')} rejected  ${rate.toLocaleString('en-US')}/s`;
      this.out.write(`\r${line}\u001b[K`);
      this.drawn = true;
      return;
    }
    this.out.write(
      JSON.stringify({
        event: 'progress',
        files_done: s.filesDone,
        files: s.files,
        bytes_done: s.bytesDone,
        bytes: s.bytes,
        records_sent: s.records.sent,
        records_acknowledged: s.records.acknowledged,
        records_rejected: s.records.rejected,
        records_per_s: rate,
        elapsed_s: Math.round(elapsed * 10) / 10,
      }) + '\n',
    );
  }

  problem(p: Problem): void {
    const where = p.line === undefined ? p.file : `${p.file}:${p.line}`;
    if (this.tty) {
      this.out.write(`${this.drawn ? '\r\u001b[K' : ''}skipped ${where}: ${p.error}\n`);
      this.drawn = false;
      this.tick(true);
      return;
    }
    this.out.write(JSON.stringify({ event: 'malformed', ...p }) + '\n');
  }

  /** The last state, and on a terminal the end of the bar's line. */
  done(): void {
    this.tick(true);
    if (this.tty && this.drawn) this.out.write('\n');
  }
}
