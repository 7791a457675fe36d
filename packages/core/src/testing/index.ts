/**
 * @vigil/core/testing: what a host or a plugin author needs to test against Vigil without a
 * network: a fake clock and the helpers that move it under a running Vigil, an in-memory store,
 * a fake runner and transport, fixtures, and the conformance suites every storage, runner and
 * transport plugin calls first in its tests.
 */
export { FakeClock } from './fake-clock.js';
export { settle, advance, advanceUntil, type AdvanceUntilOptions } from './engine-time.js';
export { seededRandom } from './seeded-random.js';
export { FakeRunner, passResult, failResult, degradedResult, type FakeOutcome } from './fake-runner.js';
export { FakeTransport, type FakeDelivery } from './fake-transport.js';
export { memoryStorage, type MemoryStorageOptions } from './memory-storage.js';
export {
  storageSuite,
  RAW_TABLES,
  type RawReader,
  type RawTable,
  type StorageFactory,
  type StorageFixture,
  type StorageSuiteOptions,
} from './storage-suite.js';
export { runnerSuite, type RunnerFixture } from './runner-suite.js';
export { transportSuite, sampleAlertMessage, type TransportFixture } from './transport-suite.js';
export type { TestFn } from './suite-types.js';
export * from './fixtures.js';
