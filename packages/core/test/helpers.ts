import { randomBytes } from 'node:crypto';
import { randomIdGenerator } from '../src/defaults/id-generator.js';
import { silentLogger } from '../src/defaults/logger.js';
import type { AlertTransport } from '../src/ports/alert-transport.js';
import type { Runner } from '../src/ports/runner.js';
import { aesGcmSecretBox } from '../src/defaults/secret-box.js';
import type { ServiceDeps } from '../src/services/deps.js';
import { FakeClock } from '../src/testing/fake-clock.js';
import { memoryStorage } from '../src/testing/memory-storage.js';

export const ACCOUNT_A = '0a6c1f2e-1111-4a1b-8c1d-000000000001';
export const ACCOUNT_B = '0b6c1f2e-2222-4b1b-8c1d-000000000002';

/** Fresh service dependencies on an in-memory store, a fake clock and a random secret key. */
export function testDeps(
  overrides: Partial<Omit<ServiceDeps, 'runners' | 'transports'>> & { runners?: Runner[]; transports?: AlertTransport[] } = {},
): ServiceDeps & { clock: FakeClock } {
  const clock = (overrides.clock as FakeClock | undefined) ?? new FakeClock('2026-05-01T12:00:00.000Z');
  return {
    storage: overrides.storage ?? memoryStorage(),
    secretBox: overrides.secretBox ?? aesGcmSecretBox(randomBytes(32)),
    clock,
    ids: overrides.ids ?? randomIdGenerator,
    logger: overrides.logger ?? silentLogger,
    runners: new Map((overrides.runners ?? []).map((r) => [r.checkType, r])),
    transports: new Map((overrides.transports ?? []).map((t) => [t.channelType, t])),
    defaultLocation: overrides.defaultLocation ?? 'us-east-1',
  };
}
