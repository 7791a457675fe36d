import 'reflect-metadata';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { createVigil, defineTransport } from '../src/index.js';
import { FakeClock, memoryStorage } from '../src/testing/index.js';

// A transport whose errors repeat what it was given, as a careless plugin's may.
const leaky = defineTransport({
  channelType: 'LEAKY',
  configSchema: v.object({ url: v.string(), token: v.string() }),
  secretFields: ['token'],
  async send(_alert, config) {
    throw new Error(`POST ${config.url}?token=${config.token} answered 401`);
  },
});

describe('alertChannels.sendTest', () => {
  it('sends through the channel\'s transport now, and reports a failure without the channel\'s secrets', async () => {
    const vigil = createVigil({ storage: memoryStorage(), secretKey: 'e'.repeat(64), clock: new FakeClock(new Date('2026-05-01T12:00:00Z')), transports: [leaky] });
    const account = await vigil.accounts.ensure(undefined, 'A');
    const channel = await vigil.alertChannels.create(account.id, { type: 'LEAKY', config: { url: 'https://hooks.example.com/x', token: 'tok-5ecret' } });
    const failure = await vigil.alertChannels.sendTest(account.id, channel.id).then(() => null, (err: Error) => err);
    expect(failure?.message).toContain('https://hooks.example.com/x?token=');
    expect(failure?.message).toContain('answered 401');
    expect(failure?.message).not.toContain('tok-5ecret');
    // Another account's channel is not found.
    const other = await vigil.accounts.ensure(undefined, 'B');
    await expect(vigil.alertChannels.sendTest(other.id, channel.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await vigil.close();
  });
});
