import { describe, expect, it } from 'vitest';
import { runChecked, runResult, type RunJob } from '../src/index.js';
import { dnsCheckFixture, runJobFixture, tcpCheckFixture } from '../src/testing/fixtures.js';

const tcpJob = (overrides: Partial<Omit<RunJob, 'check'>> = {}) => runJobFixture({ ...tcpCheckFixture(), id: 'check-1' } as never, overrides);

describe('runChecked', () => {
  it('answers what the runner found, as it is when the job has no secrets', async () => {
    const found = runResult({ responseTime: 7, details: { response: 'PONG' } });
    const result = await runChecked('TCP runner', 'TCP', tcpJob(), async () => found);
    expect(result).toBe(found);
  });

  it('scrubs the job\'s secrets from what the runner found', async () => {
    const job = tcpJob({ secrets: ['hunter2'] });
    const result = await runChecked('TCP runner', 'TCP', job, async () =>
      runResult({ hasFailures: true, errorMessage: 'sent hunter2', failureKind: 'ASSERTION', details: { response: ['x hunter2 y'] } }));
    expect(result.errorMessage).toBe('sent ********');
    expect(result.details).toEqual({ response: ['x ******** y'] });
  });

  it('answers an error result for a check of another type, without running it', async () => {
    let ran = false;
    const job = runJobFixture({ ...dnsCheckFixture(), id: 'check-2' } as never);
    const result = await runChecked('TCP runner', 'TCP', job, async () => {
      ran = true;
      return runResult();
    });
    expect(ran).toBe(false);
    expect(result).toMatchObject({ hasErrors: true, failureKind: 'OTHER', errorMessage: 'The TCP runner cannot run a DNS check' });
  });

  it('turns a throw, before or after the runner\'s first await, into an error result with secrets scrubbed', async () => {
    const job = tcpJob({ secrets: ['hunter2'] });
    const thrown = await runChecked('TCP runner', 'TCP', job, () => {
      throw new Error('no route to hunter2');
    });
    expect(thrown).toMatchObject({ hasErrors: true, failureKind: 'OTHER', errorMessage: 'The TCP runner failed: no route to ********' });
    const rejected = await runChecked('TCP runner', 'TCP', job, async () => {
      await Promise.resolve();
      throw 'hunter2 refused';
    });
    expect(rejected).toMatchObject({ hasErrors: true, failureKind: 'OTHER', errorMessage: 'The TCP runner failed: ******** refused' });
  });
});
