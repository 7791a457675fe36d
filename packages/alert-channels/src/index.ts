import { ALERT_CHANNEL_TYPES } from '@vigil/core';

/** @vigil/alert-channels: a transport for each alert channel type of the spec. */
export const SUPPORTED_CHANNEL_TYPES = ALERT_CHANNEL_TYPES;
