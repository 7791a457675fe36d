import type * as v from 'valibot';
import type { AlertChannel } from '../model/alert-channel.js';
import { createToken } from './token.js';

/** An alert, rendered once and handed to every subscribed channel's transport. */
export interface AlertMessage {
  id: string;
  accountId: string;
  alertType: string;
  /** A one-line human title, e.g. `"orders-db" is failing in eu-west-1`. */
  title: string;
  check: {
    id: string;
    name: string;
    checkType: string;
    tags: string[];
    groupName: string | null;
  };
  result: {
    id: string;
    errorMessage: string | null;
    runLocation: string;
    responseTime: number;
    startedAt: string;
  } | null;
  /** When the check started failing or degrading (null when it is passing). */
  failingSince: string | null;
  isReminder: boolean;
  reminderSequence: number;
  ssl: { domain: string; daysRemaining: number } | null;
  /** The check's environment variables (secret values removed). */
  variables: Record<string, string>;
  created_at: string;
}

export interface DeliveryReceipt {
  /** A provider's id for the delivered message, where it gives one. */
  providerId?: string | null;
  detail?: string | null;
}

/** Delivers alerts of one channel type. A plugin implements it and registers it on ALERT_TRANSPORTS. */
export interface AlertTransport {
  readonly channelType: string;
  /**
   * The channel's config, validated on create and update. A channel type that is not built in
   * (a plugin's own, such as `NTFY`) is accepted by the API once a transport for it is registered.
   */
  readonly configSchema: v.GenericSchema;
  /**
   * Config fields of a plugin's channel type that hold secrets (tokens, keys): sealed at rest,
   * masked in every response, opened only for `send`. Built-in types have their own list.
   */
  readonly secretFields?: readonly string[];
  /** Resolves when the provider confirmed delivery; throws otherwise (the outbox retries). */
  send(alert: AlertMessage, channel: AlertChannel, signal: AbortSignal): Promise<DeliveryReceipt>;
}

export const ALERT_TRANSPORTS = createToken<AlertTransport>('vigil.alertTransports');
