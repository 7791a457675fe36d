// What the engine tests share: a Vigil on a fake clock and memory storage, started and stopped per test.
import { afterEach } from 'vitest';
import { createVigil, type Vigil, type VigilOptions } from '../src/index.js';
import { FakeClock, FakeRunner, memoryStorage } from '../src/testing/index.js';
import { settle, stopOnClock } from './fake-time.js';

export const SECRET = 'c'.repeat(64);
export const T0 = '2026-05-01T12:00:00.000Z';

export const tcp = (overrides: Record<string, unknown> = {}) => ({
  name: 'orders-db', request: { hostname: '127.0.0.1', port: 5432 }, frequency: 0, frequencyOffset: 10, ...overrides,
});

export interface Setup {
  vigil: Vigil;
  clock: FakeClock;
  runner: FakeRunner;
  accountId: string;
}

const started: { vigil: Vigil; clock: FakeClock }[] = [];
afterEach(async () => {
  for (const { vigil, clock } of started.splice(0)) await stopOnClock(vigil, clock);
});

/** Stops `vigil` after the test, on its fake clock. */
export function track(vigil: Vigil, clock: FakeClock): void {
  started.push({ vigil, clock });
}

export async function setup(options: Partial<VigilOptions> = {}, runner = new FakeRunner('TCP')): Promise<Setup> {
  const clock = new FakeClock(T0);
  const vigil = createVigil({ storage: memoryStorage(), secretKey: SECRET, clock, runners: [runner], ...options });
  const account = await vigil.accounts.ensure('acct');
  return { vigil, clock, runner, accountId: account.id };
}

export async function start(s: Setup): Promise<void> {
  await s.vigil.start();
  track(s.vigil, s.clock);
  await settle();
}
