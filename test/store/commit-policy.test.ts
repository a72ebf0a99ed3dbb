// The writer's commit policy alone (no DuckDB): how much a commit takes (cut at an exact row group)
// and whether a free loader commits now or waits for submissions on their way.
import { describe, expect, it } from 'vitest';
import { CHECKPOINT_STORE_SHARE, CommitPolicy, type Queued } from '../../src/store/commit-policy.js';

/** A queued submission appending `rows` to each table given (`table:rows`), `!` marking an upsert. */
function q(...parts: string[]): Queued {
  return {
    sub: {
      parts: parts.map((p) => {
        const [table, rows] = p.replace('!', '').split(':');
        return { table: table!, rows: Number(rows), upsert: p.startsWith('!') };
      }),
    },
  };
}

describe('what a commit takes', () => {
  it('cuts the queue at the submission that brings a table exactly a row group', () => {
    expect(new CommitPolicy(10).take([q('spans:4'), q('spans:6'), q('spans:3')])).toBe(2);
    expect(new CommitPolicy(10).take([q('spans:10'), q('spans:10')])).toBe(1);
  });

  it('takes everything when no cut is exact, fewer larger commits', () => {
    expect(new CommitPolicy(10).take([q('spans:4'), q('spans:7'), q('spans:3')])).toBe(3);
    expect(new CommitPolicy(10).take([q('spans:3'), q('spans:3')])).toBe(2);
    expect(new CommitPolicy(10).take([])).toBe(0);
  });

  it('counts rows per table, and upserts not at all', () => {
    expect(new CommitPolicy(10).take([q('spans:6', 'logs:5'), q('spans:3', 'logs:5'), q('spans:1')])).toBe(2);
    expect(new CommitPolicy(10).take([q('!templates:10'), q('spans:2')])).toBe(2);
    expect(new CommitPolicy(10).take([q('spans:5', '!templates:5'), q('spans:5')])).toBe(2);
  });
});

describe('when a free loader commits', () => {
  it('commits at once a row group, or less when nothing on its way could fill one', () => {
    const p = new CommitPolicy(10);
    expect(p.commitNow([q('spans:10')])).toBe(true);
    expect(p.commitNow([q('spans:3')])).toBe(true);
  });

  it('waits for submissions on their way that would fill a row group, by the average submission', () => {
    const p = new CommitPolicy(10);
    p.submitted(q('spans:4').sub);
    p.expecting();
    expect(p.commitNow([q('spans:4')])).toBe(true); // 4 + 1 × 4 < 10
    p.expecting();
    expect(p.commitNow([q('spans:4')])).toBe(false); // 4 + 2 × 4 ≥ 10
    p.arrived();
    expect(p.commitNow([q('spans:4')])).toBe(true);
  });

  it('keeps a moving average of the rows a submission appends (upserts aside)', () => {
    const p = new CommitPolicy(100);
    p.submitted(q('spans:10', '!templates:50').sub);
    p.submitted(q('spans:20').sub); // 0.9 × 10 + 0.1 × 20 = 11
    for (let i = 0; i < 8; i++) p.expecting();
    expect(p.commitNow([q('spans:12')])).toBe(false); // 12 + 8 × 11 = 100 would fill one
    p.arrived();
    expect(p.commitNow([q('spans:12')])).toBe(true); // 12 + 7 × 11 = 89 would not
  });

  it('waits after a commit that filled a row group, even with nothing on its way', () => {
    const p = new CommitPolicy(10);
    expect(p.take([q('spans:6'), q('spans:5')])).toBe(2); // 11 rows: filled, no exact cut
    expect(p.commitNow([q('spans:3')])).toBe(false);
    expect(p.commitNow([q('spans:10')])).toBe(true);
    expect(p.take([q('spans:3')])).toBe(1);
    expect(p.commitNow([q('spans:3')])).toBe(true);
  });

  it('commits at once after a flush until the queue it found has gone', () => {
    const p = new CommitPolicy(10);
    p.take([q('spans:10')]); // filled: the next would wait
    p.flushing(2);
    expect(p.commitNow([q('spans:1'), q('spans:1')])).toBe(true);
    expect(p.take([q('spans:6'), q('spans:4'), q('spans:1')])).toBe(2); // part of the queue left: still flushing
    expect(p.commitNow([q('spans:1')])).toBe(true);
    expect(p.take([q('spans:1')])).toBe(1); // all taken, filled no more
    p.take([q('spans:10')]);
    expect(p.commitNow([q('spans:1')])).toBe(false);
    p.flushing(0);
    expect(p.commitNow([q('spans:1')])).toBe(false);
  });
});

describe('when the WAL is checkpointed', () => {
  it('is due once a table has a row group in the WAL, and not after the checkpoint', () => {
    const p = new CommitPolicy(10, 1);
    expect(p.take([q('spans:4', 'logs:3')])).toBe(1);
    expect(p.checkpointDue()).toBe(false);
    expect(p.take([q('spans:3', 'logs:3')])).toBe(1);
    expect(p.checkpointDue()).toBe(false); // 7 and 6
    expect(p.take([q('spans:4')])).toBe(1);
    expect(p.checkpointDue()).toBe(true); // 11 spans, past a group: no cut could fill it exactly
    p.checkpointed();
    expect(p.checkpointDue()).toBe(false);
  });

  it('cuts commits short of a row group to fill the group the WAL is filling exactly', () => {
    const p = new CommitPolicy(10, 1);
    expect(p.take([q('spans:2'), q('spans:2'), q('spans:2')])).toBe(3); // 6 in the WAL
    expect(p.take([q('spans:2'), q('spans:2'), q('spans:2')])).toBe(2); // 6 + 4 = 10
    expect(p.checkpointDue()).toBe(true);
    p.checkpointed();
    expect(p.take([q('spans:2'), q('spans:3')])).toBe(2);
  });

  it('is due at the configured number of row groups, and cuts at it', () => {
    const p = new CommitPolicy(10, 2);
    expect(p.take([q('spans:4'), q('spans:4')])).toBe(2); // 8
    expect(p.take([q('spans:4'), q('spans:4')])).toBe(2); // 16: a group filled, the WAL fills the next
    expect(p.checkpointDue()).toBe(false);
    expect(p.take([q('spans:2'), q('spans:2'), q('spans:2')])).toBe(2); // 16 + 4 = 20
    expect(p.checkpointDue()).toBe(true);
  });

  it('waits for CHECKPOINT_STORE_SHARE of a large table in the WAL, and cuts at it', () => {
    const p = new CommitPolicy(10, 1);
    p.stored('spans', 40 / CHECKPOINT_STORE_SHARE); // a share of 40 rows: 4 row groups
    expect(p.dueRows('spans')).toBe(40);
    expect(p.dueRows('logs')).toBe(10); // a table not stored yet: the row groups
    p.stored('logs', 1 / CHECKPOINT_STORE_SHARE); // a share of 1 row: still the row groups
    expect(p.dueRows('logs')).toBe(10);
    expect(p.take([q('spans:6'), q('spans:3')])).toBe(2); // 9
    expect(p.take([q('spans:6'), q('spans:3')])).toBe(2); // 18: a group is not enough
    expect(p.take([q('spans:6'), q('spans:3')])).toBe(2); // 27
    expect(p.take([q('spans:6'), q('spans:3')])).toBe(2); // 36
    expect(p.checkpointDue()).toBe(false);
    expect(p.take([q('spans:1'), q('spans:3'), q('spans:2')])).toBe(2); // 40
    expect(p.checkpointDue()).toBe(true);
  });

  it('leaves commits of a row group or more alone: they are written straight into the file', () => {
    const p = new CommitPolicy(10, 1);
    expect(p.take([q('spans:6')])).toBe(1);
    expect(p.take([q('spans:4'), q('spans:6'), q('spans:3')])).toBe(2); // an exact group, not 6 + 4
    expect(p.checkpointDue()).toBe(false);
    expect(p.take([q('spans:12')])).toBe(1);
    expect(p.checkpointDue()).toBe(false); // still 6
  });
});
