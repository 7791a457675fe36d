import type { VigilStorage } from '../ports/storage.js';
import type { RawReader, RawTable } from './raw-tables.js';
import { check, type TestFn } from './suite-types.js';

export interface StorageFixture {
  storage: VigilStorage;
  raw: RawReader;
}

/** Gives a fresh, empty store for each case. */
export type StorageFactory = () => Promise<StorageFixture>;

export interface StorageSuiteOptions {
  /** Put before every case name (default `storageSuite`). */
  prefix?: string;
}

/** Registers one case on a fresh store and closes the store afterwards, whatever happened. */
export type StorageCase = (name: string, fn: (f: StorageFixture) => Promise<void>, timeout?: number) => void;

export function storageCase(test: TestFn, factory: StorageFactory, options: StorageSuiteOptions): StorageCase {
  const prefix = options.prefix ?? 'storageSuite';
  return (name, fn, timeout) =>
    test(
      `${prefix}: ${name}`,
      async () => {
        const fixture = await factory();
        try {
          await fixture.storage.migrate();
          await fn(fixture);
        } finally {
          await fixture.storage.close();
        }
      },
      timeout,
    );
}

export const ACCOUNT_A = '0a6c1f2e-aaaa-4a1b-8c1d-00000000000a';
export const ACCOUNT_B = '0b6c1f2e-bbbb-4b1b-8c1d-00000000000b';

/** JSON with sorted keys, so that two values compare equal whatever the order of their keys. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  });
}

export function checkSame(actual: unknown, expected: unknown, label: string) {
  const a = canonical(actual);
  const e = canonical(expected);
  check(a === e, `${label}:\n  expected ${e}\n  received ${a}`);
}

/** Equal within a relative 1e-9 (or 1e-9 absolute near zero); nulls must both be null. */
export function checkClose(actual: number | null | undefined, expected: number | null, label: string) {
  if (expected === null) {
    check(actual === null, `${label}: expected null, received ${String(actual)}`);
    return;
  }
  check(typeof actual === 'number', `${label}: expected ${expected}, received ${String(actual)}`);
  const tolerance = 1e-9 * Math.max(1, Math.abs(expected));
  check(Math.abs(actual - expected) <= tolerance, `${label}: expected ${expected}, received ${actual}`);
}

/** Awaits `fn` and checks that it failed with a VigilError of `code` (by code, not class). */
export async function checkRejects(fn: () => Promise<unknown>, code: string, label: string) {
  let error: unknown = null;
  try {
    await fn();
  } catch (err) {
    error = err;
  }
  check(error !== null, `${label}: expected a ${code} error, but the call succeeded`);
  const actual = (error as { code?: unknown }).code;
  check(actual === code, `${label}: expected a ${code} error, received ${String(actual)}: ${String(error)}`);
}

/** The raw rows of a table as JSON texts. */
export async function rawRows(raw: RawReader, table: RawTable): Promise<string[]> {
  return (await raw.dump(table)).map((row) => JSON.stringify(row));
}

/** The raw rows whose JSON contains every one of `needles`. */
export async function rawMatching(raw: RawReader, table: RawTable, ...needles: string[]): Promise<string[]> {
  return (await rawRows(raw, table)).filter((row) => needles.every((n) => row.includes(n)));
}

export async function checkRawCount(raw: RawReader, table: RawTable, expected: number, label: string) {
  const rows = await raw.dump(table);
  check(rows.length === expected, `${label}: raw ${table} holds ${rows.length} rows, expected ${expected}`);
}

export function isoAt(base: string, offsetMs: number): string {
  return new Date(Date.parse(base) + offsetMs).toISOString();
}
