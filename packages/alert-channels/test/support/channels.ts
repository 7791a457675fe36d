import * as v from 'valibot';
import { AlertChannelSchema, type AlertChannel } from '@vigil/core';

let serial = 0;

/** A stored channel of a type, its config and flags completed with their defaults. */
export function channelOf(type: string, config: Record<string, unknown>, flags: Record<string, unknown> = {}): AlertChannel {
  return v.parse(AlertChannelSchema, {
    id: ++serial,
    accountId: '0a6c1f2e-1111-4a1b-8c1d-000000000001',
    type,
    config,
    ...flags,
    created_at: '2026-05-01T12:00:00.000Z',
    updated_at: null,
  });
}
