import type { NewRecord, Repository, StoredRecord, VigilStorage } from '../ports/storage.js';
import type { RawTable } from './raw-tables.js';
import {
  ACCOUNT_A,
  ACCOUNT_B,
  checkRawCount,
  checkRejects,
  checkSame,
  rawMatching,
  rawRows,
  type StorageCase,
  type StorageFixture,
} from './storage-suite-support.js';
import { check } from './suite-types.js';

type Owned = { id: string | number; accountId: string };

/** How the suite drives one resource repository. */
export interface ResourceSpec<T extends Owned> {
  label: string;
  table: RawTable;
  repo: (storage: VigilStorage) => Repository<T, T['id']>;
  /** A valid new record whose raw row contains `marker` (e.g. in its name). */
  make: (marker: string, fixture: StorageFixture) => Promise<NewRecord<T>> | NewRecord<T>;
  /** The stored row changed so that `marker` replaces the first one, plus another field changed. */
  change: (row: T, marker: string) => StoredRecord<T>;
  /** A record whose JSON fields sit at their edges: nulls, empty arrays, nesting, unicode. */
  rich?: (record: NewRecord<T>) => NewRecord<T>;
}

const withoutAccount = <T extends Owned>(row: T): StoredRecord<T> => {
  const { accountId: _accountId, ...rest } = row;
  return rest as StoredRecord<T>;
};

/** The row a store should answer for `record` inserted in `accountId` with `id`. */
function expectedRow<T extends Owned>(record: NewRecord<T> | StoredRecord<T>, accountId: string, id: T['id']) {
  return { ...record, id, accountId };
}

/** Registers the cases every Repository keeps. */
export function repositoryCases<T extends Owned>(c: StorageCase, spec: ResourceSpec<T>) {
  const L = spec.label;

  c(`${L}: insert, get, list, update and delete round trip`, async (f) => {
    const repo = spec.repo(f.storage);
    const record = await spec.make('mark-one', f);
    const inserted = await repo.insert(ACCOUNT_A, record);
    const id = inserted.id;
    if (typeof id === 'number') check(Number.isInteger(id) && id >= 1, `${L}: a numeric id is a positive integer, got ${id}`);
    else check(id === (record as { id?: unknown }).id, `${L}: the string id is the one inserted`);
    const expected = expectedRow(record, ACCOUNT_A, id);
    checkSame(inserted, expected, `${L}: insert answers the stored row`);
    checkSame(await repo.get(ACCOUNT_A, id), expected, `${L}: get answers the inserted row`);
    const listed = await repo.list(ACCOUNT_A);
    checkSame(listed.items, [expected], `${L}: list answers the row`);
    check(listed.total === 1, `${L}: list total is 1, got ${listed.total}`);
    check((await rawMatching(f.raw, spec.table, 'mark-one', ACCOUNT_A)).length === 1, `${L}: the raw row holds the record and its account`);

    const changed = spec.change(await repo.get(ACCOUNT_A, id) as T, 'mark-two');
    const updated = await repo.update(ACCOUNT_A, id, changed);
    checkSame(updated, expectedRow(changed, ACCOUNT_A, id), `${L}: update answers the new row`);
    checkSame(await repo.get(ACCOUNT_A, id), expectedRow(changed, ACCOUNT_A, id), `${L}: get answers the updated row`);
    await checkRawCount(f.raw, spec.table, 1, `${L}: update keeps one row`);
    check((await rawMatching(f.raw, spec.table, 'mark-two')).length === 1, `${L}: the raw row holds the new value`);
    check((await rawMatching(f.raw, spec.table, 'mark-one')).length === 0, `${L}: the raw row lost the old value`);

    check((await repo.delete(ACCOUNT_A, id)) === true, `${L}: delete answers true`);
    check((await repo.get(ACCOUNT_A, id)) === null, `${L}: a deleted row reads as absent`);
    await checkRawCount(f.raw, spec.table, 0, `${L}: the raw table no longer holds the row`);
    check((await repo.delete(ACCOUNT_A, id)) === false, `${L}: a second delete answers false`);
    check((await repo.update(ACCOUNT_A, id, changed)) === null, `${L}: updating a deleted row answers null`);
  });

  if (spec.rich) {
    const rich = spec.rich;
    c(`${L}: JSON fields round-trip exactly`, async (f) => {
      const repo = spec.repo(f.storage);
      const record = rich(await spec.make('mark-rich', f));
      const inserted = await repo.insert(ACCOUNT_A, record);
      const expected = expectedRow(record, ACCOUNT_A, inserted.id);
      checkSame(inserted, expected, `${L}: insert answers the rich row`);
      checkSame(await repo.get(ACCOUNT_A, inserted.id), expected, `${L}: get answers the rich row unchanged`);
      const again = await repo.update(ACCOUNT_A, inserted.id, withoutAccount(expected as unknown as T));
      checkSame(again, expected, `${L}: update keeps the rich row unchanged`);
      checkSame((await repo.list(ACCOUNT_A)).items, [expected], `${L}: list answers the rich row unchanged`);
    });
  }

  c(`${L}: list pages in creation order with a total`, async (f) => {
    const repo = spec.repo(f.storage);
    const ids: T['id'][] = [];
    for (let i = 0; i < 5; i++) ids.push((await repo.insert(ACCOUNT_A, await spec.make(`mark-page-${i}`, f))).id);
    await repo.insert(ACCOUNT_B, await spec.make('mark-page-other', f));
    const all = await repo.list(ACCOUNT_A);
    checkSame(all.items.map((r) => r.id), ids, `${L}: list without options answers every row, oldest first`);
    check(all.total === 5, `${L}: the total counts this account's rows only, got ${all.total}`);
    const page = await repo.list(ACCOUNT_A, { limit: 2, offset: 1 });
    checkSame(page.items.map((r) => r.id), ids.slice(1, 3), `${L}: limit 2 offset 1 answers the 2nd and 3rd rows`);
    check(page.total === 5 && page.offset === 1, `${L}: a page carries the total and its offset`);
    const tail = await repo.list(ACCOUNT_A, { limit: 10, offset: 4 });
    checkSame(tail.items.map((r) => r.id), ids.slice(4), `${L}: the last page holds what is left`);
    const past = await repo.list(ACCOUNT_A, { limit: 10, offset: 5 });
    check(past.items.length === 0 && past.total === 5, `${L}: a page past the end is empty`);
    if (typeof ids[0] === 'number') {
      const numbers = ids as number[];
      check(numbers.every((n, i) => i === 0 || n > numbers[i - 1]!), `${L}: numeric ids grow in creation order`);
    }
  });

  c(`${L}: another account reads, changes and deletes nothing`, async (f) => {
    const repo = spec.repo(f.storage);
    const row = await repo.insert(ACCOUNT_A, await spec.make('mark-owned', f));
    const before = await rawRows(f.raw, spec.table);
    check((await repo.get(ACCOUNT_B, row.id)) === null, `${L}: get from another account answers null`);
    check((await repo.list(ACCOUNT_B)).total === 0, `${L}: list of another account is empty`);
    const stolen = spec.change(row, 'mark-stolen');
    check((await repo.update(ACCOUNT_B, row.id, stolen)) === null, `${L}: update from another account answers null`);
    check((await repo.delete(ACCOUNT_B, row.id)) === false, `${L}: delete from another account answers false`);
    checkSame(await rawRows(f.raw, spec.table), before, `${L}: the raw row is unchanged`);
    checkSame(await repo.get(ACCOUNT_A, row.id), row, `${L}: the owner still reads the row unchanged`);
  });

  c(`${L}: ids are unique`, async (f) => {
    const repo = spec.repo(f.storage);
    const record = await spec.make('mark-unique', f);
    const first = await repo.insert(ACCOUNT_A, record);
    if (typeof first.id === 'number') {
      const second = await repo.insert(ACCOUNT_A, await spec.make('mark-unique-2', f));
      check(second.id !== first.id, `${L}: two inserts get two ids`);
      return;
    }
    await checkRejects(() => repo.insert(ACCOUNT_A, record), 'CONFLICT', `${L}: a second insert of an id`);
    await checkRejects(() => repo.insert(ACCOUNT_B, record), 'CONFLICT', `${L}: the same id in another account`);
    await checkRawCount(f.raw, spec.table, 1, `${L}: a conflict stores nothing`);
  });
}
