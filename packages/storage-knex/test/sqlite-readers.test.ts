// A SQLite file is read on connections beside its one writer: a read does not queue behind a write
// under way, and sees every write committed before it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tcpCheckFixture } from '@vigil/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { knexStorage } from '../src/index.js';
import { holdWrite } from './support/hold-write.js';

const ACCOUNT = '0a6c1f2e-1111-4a1b-8c1d-000000000001';
const dir = mkdtempSync(join(tmpdir(), 'vigil-sqlite-readers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

const settledWithin = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(r, ms, false))]);

describe('SQLite read connections', () => {
  it('answer a read while a write transaction is under way on the writer', async () => {
    const storage = knexStorage({ client: 'sqlite3', connection: join(dir, `db-${++n}.sqlite`) });
    const check = await storage.checks.insert(ACCOUNT, tcpCheckFixture() as never);
    const write = await holdWrite(storage);
    const read = storage.checks.get(ACCOUNT, check.id);
    expect(await settledWithin(read, 1_000)).toBe(true);
    expect((await read)?.id).toBe(check.id);
    expect((await storage.checkStatuses.list(ACCOUNT))).toEqual([]);
    await write.release();
    await storage.close();
  });

  it('with readers: 0, a read waits for the writer', async () => {
    const storage = knexStorage({ client: 'sqlite3', connection: join(dir, `db-${++n}.sqlite`), readers: 0 });
    const check = await storage.checks.insert(ACCOUNT, tcpCheckFixture() as never);
    const write = await holdWrite(storage);
    const read = storage.checks.get(ACCOUNT, check.id);
    expect(await settledWithin(read, 300)).toBe(false);
    await write.release();
    expect((await read)?.id).toBe(check.id);
    await storage.close();
  });

  it('see each write as soon as it has committed', async () => {
    const storage = knexStorage({ client: 'sqlite3', connection: join(dir, `db-${++n}.sqlite`) });
    for (let i = 0; i < 50; i++) {
      const check = await storage.checks.insert(ACCOUNT, { ...tcpCheckFixture(), name: `c${i}` } as never);
      expect((await storage.checks.get(ACCOUNT, check.id))?.name).toBe(`c${i}`);
      await storage.checks.update(ACCOUNT, check.id, { ...check, name: `renamed ${i}` } as never);
      expect((await storage.checks.get(ACCOUNT, check.id))?.name).toBe(`renamed ${i}`);
      expect((await storage.checks.listSummaries(ACCOUNT)).length).toBe(i + 1);
    }
    await storage.close();
  });
});
