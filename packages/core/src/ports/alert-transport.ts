import type * as v from 'valibot';
import type { AlertChannel, AlertChannelFlags } from '../model/alert-channel.js';
import type { TargetPolicy } from '../runner-kit/target-policy.js';
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

/** What the dispatcher tells a transport about the process it delivers from. */
export interface DeliveryContext {
  /**
   * Which addresses a delivery may connect to (the host's `targetPolicy`). A transport that sends
   * to a URL the account wrote checks every address it connects to with `checkAddress` and
   * fails the delivery with `targetRefusalMessage(refusal, host)` when one is refused. Endpoints
   * the host configured itself (a provider's base URL, an SMTP server) need no check.
   */
  targetPolicy?: TargetPolicy;
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
  /**
   * Resolves when the provider confirmed delivery; throws otherwise (the outbox retries). The
   * dispatcher passes `context` on every send; a transport written before it may ignore it.
   */
  send(alert: AlertMessage, channel: AlertChannel, signal: AbortSignal, context?: DeliveryContext): Promise<DeliveryReceipt>;
}

export const ALERT_TRANSPORTS = createToken<AlertTransport>('vigil.alertTransports');

/** A channel of a plugin's type as its transport gets it: the flags every channel has, its type and its parsed config. */
export interface TransportChannel<TType extends string = string, TConfig = Record<string, unknown>> extends AlertChannelFlags {
  id: number;
  accountId: string;
  type: TType;
  config: TConfig;
  created_at: string;
  updated_at: string | null;
}

export interface TransportDefinition<TType extends string, TSchema extends v.GenericSchema> {
  /** The channel type, upper-case letters, digits and `_` (`NTFY`). */
  channelType: TType;
  /** The valibot schema of the channel's `config`: applied on create and update, and before every send. */
  configSchema: TSchema;
  /** Config fields that hold secrets (see AlertTransport.secretFields). */
  secretFields?: readonly (keyof v.InferOutput<TSchema> & string)[];
  /**
   * Delivers one alert to one channel, with the channel's config already parsed (defaults filled
   * in, typed). Resolves once the receiver confirmed it; throws otherwise (the outbox retries).
   */
  send(
    alert: AlertMessage,
    config: v.InferOutput<TSchema>,
    channel: TransportChannel<TType, v.InferOutput<TSchema>>,
    signal: AbortSignal,
    context?: DeliveryContext,
  ): Promise<DeliveryReceipt>;
}

/** An AlertTransport made by `defineTransport`: it also takes a channel typed as its own. */
export interface DefinedTransport<TType extends string, TSchema extends v.GenericSchema> extends AlertTransport {
  readonly channelType: TType;
  readonly configSchema: TSchema;
  send(alert: AlertMessage, channel: AlertChannel | TransportChannel<TType>, signal: AbortSignal, context?: DeliveryContext): Promise<DeliveryReceipt>;
}
