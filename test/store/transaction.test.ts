// inTransaction on a real DuckDB connection: committed when its work resolves, rolled back when it
// throws, and a connection that an earlier failure left in an aborted transaction is rolled back
// before the next transaction begins instead of failing every one after it.
import { afterEach, describe, expect, it } from 'vitest';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { inTransaction } from '../../src/store/sql.js';

const conns: DuckDBConnection[] = [];
afterEach(() => {
  while (conns.length) conns.pop()!.closeSync();
});

async function conn(): Promise<DuckDBConnection> {
  const c = await (await DuckDBInstance.create(':memory:')).connect();
  conns.push(c);
  await c.run('CREATE TABLE t (a INTEGER PRIMARY KEY)');
  return c;
}
const rows = async (c: DuckDBConnection) => (await c.runAndReadAll('SELECT a FROM t ORDER BY a')).getRows().map((r) => Number(r[0]));

describe('inTransaction', () => {
  it('commits what resolves and rolls back what throws', async () => {
    const c = await conn();
    await inTransaction(c, () => c.run('INSERT INTO t VALUES (1)'));
    await expect(inTransaction(c, async () => (await c.run('INSERT INTO t VALUES (2)'), await c.run('INSERT INTO t VALUES (1)')))).rejects.toThrow(/constraint/i);
    expect(await rows(c)).toEqual([1]);
  });

  it('rolls back a failed transaction another caller left open, then runs its own', async () => {
    const c = await conn();
    await c.run('BEGIN TRANSACTION');
    await c.run('INSERT INTO t VALUES (5)');
    await expect(c.run('INSERT INTO t VALUES (5)')).rejects.toThrow(/constraint/i);
    await expect(c.run('SELECT 1')).rejects.toThrow(/transaction is aborted/);
    await inTransaction(c, () => c.run('INSERT INTO t VALUES (6)'));
    expect(await rows(c)).toEqual([6]);
  });

  it('leaves an open transaction that did not fail alone: BEGIN inside it is an error', async () => {
    const c = await conn();
    await c.run('BEGIN TRANSACTION');
    await expect(inTransaction(c, () => c.run('INSERT INTO t VALUES (7)'))).rejects.toThrow(/transaction/i);
  });
});
