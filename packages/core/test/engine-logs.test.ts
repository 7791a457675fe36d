import { afterEach, describe, expect, it } from 'vitest';
import { capture, type Line } from './capture-logger.js';
import { runFor, settle } from './fake-time.js';
import { createVigil, redactingLogger, type Vigil } from '../src/index.js';
import { failResult, FakeClock, FakeRunner, FakeTransport, memoryStorage } from '../src/testing/index.js';

const T0 = '2026-05-01T12:00:00.000Z';
const DB_PASSWORD = 's3cr3t-hunter2!';
const SERVICE_TOKEN = 'tok_9f8e7d6c5b4a';
const HOOK_TOKEN = 'Bearer hook-token-5e6f7a';
const WEBHOOK_SECRET = 'whsec-abcdef123456';

/** Every form a secret could leak in: as is, URL-encoded, base64. */
const forms = (secret: string) => [secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64')];

const started: Vigil[] = [];
afterEach(async () => {
  for (const v of started.splice(0)) await v.stop(0);
});

describe('engine logs', () => {
  it('carry accountId, checkId and runId on run lines, and no secret of the check or the channel', async () => {
    const lines: Line[] = [];
    // First attempt: the runner throws quoting a secret; the retry fails with both secrets in its message.
    const runner = new FakeRunner('BROWSER', [
      (job) => {
        throw new Error(`login as admin:${job.environment.DB_PASSWORD} refused`);
      },
      (job) => failResult(`auth failed for ${job.environment.DB_PASSWORD} with ${encodeURIComponent(job.environment.SERVICE_SECRET_TOKEN!)}`),
    ]);
    // A receiver whose error echoes the channel's header and signing secret.
    const transport = new FakeTransport('WEBHOOK');
    transport.send = async (_alert, channel) => {
      const config = channel.config as { headers: { value: string }[]; webhookSecret: string };
      throw new Error(`401 from receiver: header ${config.headers[0]!.value} / signature key ${config.webhookSecret}`);
    };
    const clock = new FakeClock(T0);
    const vigil = createVigil({
      storage: memoryStorage(), secretKey: 'e'.repeat(64), clock, runners: [runner], transports: [transport], logger: capture(lines),
    });
    const account = await vigil.accounts.ensure('acct');
    const channel = await vigil.alertChannels.create(account.id, {
      type: 'WEBHOOK',
      config: { name: 'ops hook', url: 'https://hooks.example.com/in', headers: [{ key: 'Authorization', value: HOOK_TOKEN }], webhookSecret: WEBHOOK_SECRET },
    });
    const check = await vigil.checks.create(account.id, 'BROWSER', {
      name: 'login', script: 'await page.goto(process.env.URL)', frequency: 1,
      retryStrategy: { type: 'FIXED', baseBackoffSeconds: 1, maxRetries: 1, maxDurationSeconds: 60, sameRegion: true },
      environmentVariables: [
        { key: 'DB_PASSWORD', value: DB_PASSWORD, secret: true },
        { key: 'SERVICE_SECRET_TOKEN', value: SERVICE_TOKEN },
      ],
    });
    await vigil.start();
    started.push(vigil);
    await settle();
    await runFor(clock, 75_000, 250);

    const text = JSON.stringify(lines);
    for (const secret of [DB_PASSWORD, SERVICE_TOKEN, HOOK_TOKEN, WEBHOOK_SECRET]) {
      for (const form of forms(secret)) expect(text).not.toContain(form);
    }

    const threw = lines.find((l) => l.msg === 'runner threw');
    expect(threw?.meta).toMatchObject({ accountId: account.id, checkId: check.id, runId: expect.any(String), attempt: 1, location: 'us-east-1' });
    expect(threw?.meta.error).toBe('login as admin:******** refused');

    const finished = lines.find((l) => l.msg === 'run: finished');
    expect(finished?.level).toBe('debug');
    expect(finished?.meta).toMatchObject({
      accountId: account.id, checkId: check.id, runId: expect.any(String), checkType: 'BROWSER', location: 'us-east-1',
      runSource: 'SCHEDULER', outcome: 'failed', attempts: 2, errorMessage: 'auth failed for ******** with ********',
    });
    // The run id of the log is the id of the stored (FINAL) result of that run.
    const stored = await vigil.checkResults.list(account.id, check.id, { limit: 100 });
    expect(stored.items.map((r) => r.id)).toContain(finished?.meta.runId);

    const queued = lines.find((l) => l.msg === 'alerts: queued');
    expect(queued?.meta).toMatchObject({ accountId: account.id, checkId: check.id, runId: finished?.meta.runId, alertTypes: ['ALERT_FAILURE'] });

    const delivery = lines.find((l) => l.msg === 'alerts: delivery failed; retrying later');
    expect(delivery?.level).toBe('warn');
    expect(delivery?.meta).toMatchObject({ accountId: account.id, checkId: check.id, alertChannelId: channel.id, channelType: 'WEBHOOK', attempt: 1 });
    expect(delivery?.meta.error).toBe('401 from receiver: header ******** / signature key ********');
  });

  it('masks fields named like a secret, at any depth and in bound fields, whatever the caller passes', () => {
    const lines: Line[] = [];
    const logger = redactingLogger(capture(lines));
    logger.child({ apiKey: 'vgl_abc' }).warn('something', {
      checkId: 'c-1', password: 'p4ss', request: { headers: { Authorization: 'Bearer x', accept: 'json' } }, items: [{ clientSecret: 's' }], count: 3,
    });
    expect(lines).toEqual([{
      level: 'warn',
      msg: 'something',
      meta: {
        apiKey: '[redacted]', checkId: 'c-1', password: '[redacted]',
        request: { headers: { Authorization: '[redacted]', accept: 'json' } }, items: [{ clientSecret: '[redacted]' }], count: 3,
      },
    }]);
  });
});
