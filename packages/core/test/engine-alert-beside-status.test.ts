import { describe, expect, it } from 'vitest';
import { runFor } from './fake-time.js';
import { createVigil } from '../src/index.js';
import { failResult, FakeClock, FakeRunner, memoryStorage } from '../src/testing/index.js';
import { SECRET, T0, tcp, track } from './engine-support.js';

describe('a failed run stored', () => {
  it('queues its alert while the check\'s status is still being written', async () => {
    const clock = new FakeClock(T0);
    const storage = memoryStorage();
    // The status store answers only once the test lets it.
    let letStatusGo = () => {};
    const held = new Promise<void>((resolve) => { letStatusGo = resolve; });
    const replace = storage.checkStatuses.replace.bind(storage.checkStatuses);
    storage.checkStatuses.replace = async (...args) => {
      await held;
      return replace(...args);
    };
    const vigil = createVigil({ storage, secretKey: SECRET, clock, runners: [new FakeRunner('TCP', [failResult('Connection refused')])] });
    const { id: accountId } = await vigil.accounts.ensure('acct');
    const channel = await vigil.alertChannels.create(accountId, { type: 'EMAIL', config: { address: 'ops@example.com' } });
    const check = await vigil.checks.create(accountId, 'TCP', tcp());
    await vigil.start();
    track(vigil, clock);
    await runFor(clock, 25_000);
    expect((await storage.outbox.pending(accountId)).map((m) => [m.checkId, m.alertType, m.alertChannelId])).toEqual([[check.id, 'ALERT_FAILURE', channel.id]]);
    expect(await storage.checkStatuses.get(accountId, check.id)).toBeNull();
    letStatusGo();
    await runFor(clock, 1_000);
    expect((await storage.checkStatuses.get(accountId, check.id))?.hasFailures).toBe(true);
  });
});
