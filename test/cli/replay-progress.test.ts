// `tds replay`'s progress on stderr: a bar redrawn in place on a terminal, JSON lines otherwise.
import { describe, expect, it } from 'vitest';
import { Progress, type ProgressState } from '../../src/cli/replay/progress.js';

const state: ProgressState = { filesDone: 1, files: 4, bytesDone: 50, bytes: 100, records: { sent: 1200, acknowledged: 1000, rejected: 3 } };

describe('replay progress', () => {
  it('draws a bar in place on a terminal, and ends its line', () => {
    let out = '';
    const p = new Progress({ write: (s: string) => (out += s), isTTY: true }, () => state);
    p.tick(true);
    p.problem({ file: 'a.jsonl', line: 7, error: 'invalid JSON' });
    p.done();
    expect(out).toMatch(/^\r\[#{15}\.{15}\]  50%  files 1\/4  records 1,200 sent, 1,000 acknowledged, 3 rejected/);
    expect(out).toContain('skipped a.jsonl:7: invalid JSON\n');
    expect(out.endsWith('\n')).toBe(true);
    expect(out).not.toContain('{');
  });

  it('writes JSON lines elsewhere, at most one a second unless forced', () => {
    let out = '';
    const p = new Progress({ write: (s: string) => (out += s) }, () => state);
    p.tick();
    p.tick();
    p.problem({ file: 'b.pb', error: 'not OTLP protobuf' });
    p.done();
    const lines = out.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.event)).toEqual(['progress', 'malformed', 'progress']);
    expect(lines[0]).toMatchObject({ files_done: 1, files: 4, bytes_done: 50, bytes: 100, records_sent: 1200, records_acknowledged: 1000, records_rejected: 3 });
    expect(lines[1]).toEqual({ event: 'malformed', file: 'b.pb', error: 'not OTLP protobuf' });
  });
});
