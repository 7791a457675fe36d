import type { TestFn } from './suite-types.js';
import { managedResourceCases } from './storage-suite-managed.js';
import { pageCases } from './storage-suite-pages.js';
import { outboxCases, scheduleCases } from './storage-suite-queues.js';
import { resourceCases } from './storage-suite-resources.js';
import { resultCases } from './storage-suite-results.js';
import { runCases } from './storage-suite-runs.js';
import { storageCase, type StorageFactory, type StorageSuiteOptions } from './storage-suite-support.js';

export type { RawReader, RawTable } from './raw-tables.js';
export { RAW_TABLES } from './raw-tables.js';
export type { StorageFactory, StorageFixture, StorageSuiteOptions } from './storage-suite-support.js';

/**
 * The contract every VigilStorage keeps. A storage plugin calls it first in its tests:
 * `storageSuite(it, async () => ({ storage, raw }))`, with a fresh, empty store per call. Each case
 * checks what the repositories answer and, through `raw`, what the store really wrote.
 */
export function storageSuite(test: TestFn, factory: StorageFactory, options: StorageSuiteOptions = {}) {
  const c = storageCase(test, factory, options);
  resourceCases(c);
  pageCases(c);
  runCases(c);
  resultCases(c);
  scheduleCases(c);
  outboxCases(c);
  managedResourceCases(c);
}
