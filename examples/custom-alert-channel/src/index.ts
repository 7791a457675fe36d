/** An alert channel type for ntfy push notifications, written against @vigil/core alone. */
export {
  NTFY_CHANNEL_TYPE,
  NtfyConfigSchema,
  ntfyBody,
  ntfyRequest,
  ntfyTransport,
  type NtfyConfig,
  type NtfyRequest,
  type NtfyTransportOptions,
} from './ntfy-transport.js';
