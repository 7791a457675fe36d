import * as v from 'valibot';
import type { DefinedTransport, TransportChannel, TransportDefinition } from '../ports/alert-transport.js';

/**
 * Defines the transport of a channel type, as `defineCheckType` does a check type: `send` gets the
 * channel's config parsed by `configSchema`, so it reads typed fields and never parses it again. A
 * stored config the schema rejects (one written before the schema changed) fails the delivery with
 * an error naming the channel and the fields, never their values. Throws a TypeError for a
 * malformed channel type.
 */
export function defineTransport<const TType extends string, TSchema extends v.GenericSchema>(
  definition: TransportDefinition<TType, TSchema>,
): DefinedTransport<TType, TSchema> {
  const { channelType, configSchema, secretFields } = definition;
  if (!/^[A-Z][A-Z0-9_]*$/.test(channelType)) {
    throw new TypeError(`defineTransport: channelType must be upper-case letters, digits and _ (such as NTFY), got "${channelType}"`);
  }
  return {
    channelType,
    configSchema,
    ...(secretFields ? { secretFields } : {}),
    async send(alert, channel, signal, context) {
      const parsed = v.safeParse(configSchema, channel.config, { abortEarly: false });
      if (!parsed.success) {
        const fields = [...new Set(parsed.issues.map((issue) => `config.${v.getDotPath(issue) ?? ''}`.replace(/\.$/, '')))];
        throw new Error(`The ${channelType} channel ${channel.id} has a config its transport cannot read: ${fields.join(', ')}`);
      }
      const config = parsed.output as v.InferOutput<TSchema>;
      return definition.send(alert, config, { ...channel, config } as TransportChannel<TType, v.InferOutput<TSchema>>, signal, context);
    },
  };
}
