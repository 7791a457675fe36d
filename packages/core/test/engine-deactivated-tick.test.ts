import { describe, expect, it } from 'vitest';
import { runFor } from './fake-time.js';
import { failResult, FakeRunner } from '../src/testing/index.js';
import { setup, start, tcp } from './engine-support.js';

describe('a check deactivated while its run is under way', () => {
  it('gets no alert tick from that run, and so no reminders, though the run turned it failing', async () => {
    let letRunEnd = () => {};
    const held = new Promise<void>((resolve) => { letRunEnd = resolve; });
    const runner = new FakeRunner('TCP', [async () => {
      await held;
      return failResult('Connection refused');
    }]);
    const s = await setup({}, runner);
    await s.vigil.alertChannels.create(s.accountId, { type: 'EMAIL', config: { address: 'ops@example.com' } });
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcp({
      frequency: 1, useGlobalAlertSettings: false,
      alertSettings: { escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 1 }, reminders: { amount: 5, interval: 5 } },
    }));
    await start(s);
    await runFor(s.clock, 61_000);
    expect(runner.jobs).toHaveLength(1);
    await s.vigil.checks.update(s.accountId, check.id, { activated: false });
    letRunEnd();
    // The run ends (its retries included), with nothing more of the check's after it.
    await runFor(s.clock, 2 * 60_000);
    const jobs = runner.jobs.length;
    await runFor(s.clock, 30 * 60_000);
    // The run was under way: its failure is taken in and alerted once.
    expect((await s.vigil.storage.outbox.pending(s.accountId)).map((m) => m.alertType)).toEqual(['ALERT_FAILURE']);
    expect(await s.vigil.storage.schedule.list(s.accountId, check.id)).toEqual([]);
    expect(runner.jobs).toHaveLength(jobs);
  });
});
