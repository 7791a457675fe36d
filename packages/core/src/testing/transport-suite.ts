import * as v from 'valibot';
import type { AlertChannel } from '../model/alert-channel.js';
import type { AlertMessage, AlertTransport } from '../ports/alert-transport.js';
import { check, type TestFn } from './suite-types.js';

export interface TransportFixture {
  transport: AlertTransport;
  /** A channel whose receiving end works. */
  channel: AlertChannel;
  /** What the receiving end got so far, in order (parsed requests, emails, ...). */
  received(): Promise<unknown[]>;
  /** A channel whose receiving end refuses delivery (answers 500, rejects the message). */
  failingChannel?: AlertChannel;
  /** A config the transport's schema must reject. */
  invalidConfig?: unknown;
  cleanup?: () => Promise<void>;
}

/** An alert message for tests, with every field filled. */
export function sampleAlertMessage(overrides: Partial<AlertMessage> = {}): AlertMessage {
  return {
    id: '5b0d5c1e-7c1a-4f5e-9d1e-1a2b3c4d5e6f',
    accountId: '0a6c1f2e-1111-4a1b-8c1d-000000000001',
    alertType: 'ALERT_FAILURE',
    title: '"orders-db" is failing in eu-west-1',
    check: { id: '8e3c2b1a-0f9e-4d8c-b7a6-5f4e3d2c1b0a', name: 'orders-db', checkType: 'TCP', tags: ['prod'], groupName: null },
    result: {
      id: '1f2e3d4c-5b6a-4978-8695-a4b3c2d1e0f9',
      errorMessage: 'connect ECONNREFUSED 127.0.0.1:5432',
      runLocation: 'eu-west-1',
      responseTime: 12,
      startedAt: '2026-05-01T12:00:00.000Z',
    },
    failingSince: '2026-05-01T11:58:00.000Z',
    isReminder: false,
    reminderSequence: 0,
    ssl: null,
    variables: {},
    created_at: '2026-05-01T12:00:01.000Z',
    ...overrides,
  };
}

/**
 * The contract every AlertTransport keeps. A transport package calls it first in its tests:
 * `transportSuite(it, async () => ({ transport, channel, received, failingChannel }))`.
 */
export function transportSuite(test: TestFn, factory: () => Promise<TransportFixture>, options: { prefix?: string } = {}) {
  const name = (n: string) => `${options.prefix ?? 'transportSuite'}: ${n}`;
  const withFixture = (fn: (f: TransportFixture) => Promise<void>) => async () => {
    const f = await factory();
    try {
      await fn(f);
    } finally {
      await f.cleanup?.();
    }
  };

  test(name('declares its channel type and validates its config'), withFixture(async ({ transport, channel, invalidConfig }) => {
    check(typeof transport.channelType === 'string' && transport.channelType.length > 0, 'channelType is a non-empty string');
    check(channel.type === transport.channelType, 'the fixture channel is of the transport\'s type');
    check(v.safeParse(transport.configSchema, channel.config).success, 'configSchema accepts the fixture channel\'s config');
    if (invalidConfig !== undefined) {
      check(!v.safeParse(transport.configSchema, invalidConfig).success, 'configSchema accepts an invalid config');
    }
  }));

  test(name('delivers one alert once, naming the check'), withFixture(async ({ transport, channel, received }) => {
    const before = (await received()).length;
    const receipt = await transport.send(sampleAlertMessage(), channel, new AbortController().signal);
    check(typeof receipt === 'object' && receipt !== null, 'send resolves with a receipt');
    const got = await received();
    check(got.length === before + 1, `the receiver got ${got.length - before} messages instead of 1`);
    check(JSON.stringify(got.at(-1)).includes('orders-db'), 'the delivered message names the check');
  }));

  test(name('a refused delivery rejects, so the outbox retries it'), withFixture(async ({ transport, failingChannel }) => {
    if (!failingChannel) return;
    let rejected = false;
    try {
      await transport.send(sampleAlertMessage(), failingChannel, new AbortController().signal);
    } catch {
      rejected = true;
    }
    check(rejected, 'send resolved although the receiver refused the message');
  }));

  test(name('an aborted send rejects'), withFixture(async ({ transport, channel }) => {
    const controller = new AbortController();
    controller.abort();
    let rejected = false;
    try {
      await transport.send(sampleAlertMessage(), channel, controller.signal);
    } catch {
      rejected = true;
    }
    check(rejected, 'send resolved with an aborted signal');
  }));
}
