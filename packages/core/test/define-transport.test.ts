import * as v from 'valibot';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { defineTransport, modelObject, type AlertChannel, type TransportChannel } from '../src/index.js';
import { sampleAlertMessage } from '../src/testing/index.js';

const PagerConfigSchema = modelObject({
  route: v.pipe(v.string(), v.minLength(1)),
  token: v.string(),
  urgency: v.optional(v.picklist(['low', 'high']), 'high'),
});
type PagerConfig = v.InferOutput<typeof PagerConfigSchema>;

function pagerChannel(config: Record<string, unknown>): TransportChannel<'PAGER'> {
  return {
    id: 7, accountId: 'account-1', type: 'PAGER', config,
    sendFailure: true, sendRecovery: true, sendDegraded: false, sslExpiry: false, sslExpiryThreshold: 30, autoSubscribe: false,
    created_at: '2026-05-01T12:00:00.000Z', updated_at: null,
  };
}

function pager() {
  const sent: { config: PagerConfig; channel: TransportChannel<'PAGER', PagerConfig> }[] = [];
  const transport = defineTransport({
    channelType: 'PAGER',
    configSchema: PagerConfigSchema,
    secretFields: ['token'],
    async send(_alert, config, channel) {
      expectTypeOf(config).toEqualTypeOf<PagerConfig>();
      sent.push({ config, channel });
      return { providerId: `${config.route}/${config.urgency}` };
    },
  });
  return { transport, sent };
}

describe('defineTransport', () => {
  it('hands send the channel\'s config parsed by its schema, defaults filled in', async () => {
    const { transport, sent } = pager();
    const receipt = await transport.send(sampleAlertMessage(), pagerChannel({ route: 'ops', token: 'tk' }), new AbortController().signal);
    expect(receipt).toEqual({ providerId: 'ops/high' });
    expect(sent[0]!.config).toEqual({ route: 'ops', token: 'tk', urgency: 'high' });
    expect(sent[0]!.channel).toMatchObject({ id: 7, type: 'PAGER', config: { route: 'ops', token: 'tk', urgency: 'high' } });
  });

  it('is an AlertTransport: the channel type, the schema and the secret fields as given', () => {
    const { transport } = pager();
    expect(transport).toMatchObject({ channelType: 'PAGER', configSchema: PagerConfigSchema, secretFields: ['token'] });
    expectTypeOf(transport.send).parameter(1).toMatchTypeOf<AlertChannel | TransportChannel<'PAGER'>>();
  });

  it('fails the delivery of a config the schema rejects, naming the channel and the fields but no value', async () => {
    const { transport, sent } = pager();
    const err = await transport.send(sampleAlertMessage(), pagerChannel({ route: '', token: 42, urgency: 'secret-ish' }), new AbortController().signal)
      .catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toBe('The PAGER channel 7 has a config its transport cannot read: config.route, config.token, config.urgency');
    expect(sent).toEqual([]);
  });

  it('refuses a malformed channel type', () => {
    expect(() => defineTransport({ channelType: 'pager', configSchema: PagerConfigSchema, send: async () => ({}) }))
      .toThrow('defineTransport: channelType must be upper-case letters, digits and _ (such as NTFY), got "pager"');
  });
});
