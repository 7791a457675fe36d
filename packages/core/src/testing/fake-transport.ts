import * as v from 'valibot';
import type { AlertChannel } from '../model/alert-channel.js';
import type { AlertMessage, AlertTransport, DeliveryContext, DeliveryReceipt } from '../ports/alert-transport.js';

export interface FakeDelivery {
  alert: AlertMessage;
  channel: AlertChannel;
  /** What the dispatcher passed along (the host's target policy). */
  context?: DeliveryContext;
}

/**
 * A transport that keeps what it was asked to send. `failNext(n)` makes the next n sends throw,
 * as a provider that is down would.
 */
export class FakeTransport implements AlertTransport {
  readonly sent: FakeDelivery[] = [];
  readonly configSchema: v.GenericSchema;
  private failures = 0;
  private readonly refused = new Set<number>();
  attempts = 0;

  constructor(
    readonly channelType: string = 'WEBHOOK',
    configSchema: v.GenericSchema = v.record(v.string(), v.unknown()),
  ) {
    this.configSchema = configSchema;
  }

  failNext(times: number): this {
    this.failures = times;
    return this;
  }

  /** Every send to this channel throws, as a receiver that rejects the message would. */
  refuseChannel(alertChannelId: number): this {
    this.refused.add(alertChannelId);
    return this;
  }

  async send(alert: AlertMessage, channel: AlertChannel, signal: AbortSignal, context?: DeliveryContext): Promise<DeliveryReceipt> {
    this.attempts++;
    if (signal.aborted) throw new Error('Delivery aborted');
    if (this.refused.has(channel.id)) throw new Error(`Channel ${channel.id} refused the alert`);
    if (this.failures > 0) {
      this.failures--;
      throw new Error('Provider unavailable');
    }
    this.sent.push({ alert: structuredClone(alert), channel: structuredClone(channel), ...(context ? { context } : {}) });
    return { providerId: `fake-${this.sent.length}`, detail: null };
  }
}
