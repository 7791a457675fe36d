import { describe, expect, expectTypeOf, it } from 'vitest';
import type * as v from 'valibot';
import {
  AlertChannelFlagsSchema,
  AlertChannelResponseSchema,
  AlertChannelSchema,
  AlertSettingsSchema,
  CheckGroupCreateSchema,
  CheckGroupResponseSchema,
  CheckGroupSchema,
  CheckGroupUpdateSchema,
  RetryStrategySchema,
  type API_ASSERTION_COMPARISONS,
  type API_ASSERTION_SOURCES,
  type ESCALATION_TYPES,
  type Location,
  type MINUTES_FAILING_THRESHOLDS,
  type REMINDER_INTERVALS,
  type RETRY_TYPES,
  type RuntimeId,
} from '../src/index.js';

// The shapes core's schemas give a host's code, written out. Core names the schema types it reuses
// (interfaces such as RetryStrategySchema, CheckGroupEntries) so that a strict host checks each once;
// these pin what those names stand for: a change to a schema's shape fails the type-check here.

type OneOf<T extends readonly unknown[]> = T[number];
/** A body's field a client may leave out (core applies its default). */
type Optional<T> = { [K in keyof T]?: T[K] | undefined };

interface AlertSettings {
  escalationType: OneOf<typeof ESCALATION_TYPES>;
  runBasedEscalation: { failedRunThreshold: number };
  timeBasedEscalation: { minutesFailingThreshold: OneOf<typeof MINUTES_FAILING_THRESHOLDS> };
  reminders: { amount: number; interval: OneOf<typeof REMINDER_INTERVALS> };
  parallelRunFailureThreshold: { enabled: boolean; percentage: number };
}

interface RetryStrategy {
  type: OneOf<typeof RETRY_TYPES>;
  baseBackoffSeconds: number;
  maxRetries: number;
  maxDurationSeconds: number;
  sameRegion: boolean;
  onlyOn: 'NETWORK_ERROR'[];
}

interface KeyValue {
  key: string;
  value: string;
}

interface GroupFields {
  name: string;
  activated: boolean;
  muted: boolean;
  tags: string[];
  locations: Location[];
  concurrency: number;
  apiCheckDefaults: {
    url: string;
    headers: KeyValue[];
    queryParameters: KeyValue[];
    assertions: {
      source: OneOf<typeof API_ASSERTION_SOURCES>;
      comparison: OneOf<typeof API_ASSERTION_COMPARISONS>;
      target: string;
      property: string;
      regex: string | null;
    }[];
    basicAuth: { username: string; password: string };
  };
  browserCheckDefaults: string | null;
  runtimeId: RuntimeId | null;
  environmentVariables: { key: string; value: string; locked: boolean; secret: boolean }[] | null;
  alertChannelSubscriptions: { alertChannelId: number; activated: boolean }[];
  setupSnippetId: number | null;
  tearDownSnippetId: number | null;
  localSetupScript: string | null;
  localTearDownScript: string | null;
  privateLocations: string[] | null;
  runParallel: boolean | null;
  alertSettings: AlertSettings;
  retryStrategy: 'FALLBACK' | RetryStrategy | null;
  useGlobalAlertSettings: boolean | null;
  doubleCheck: boolean;
}

interface ChannelFlags {
  sendRecovery: boolean;
  sendFailure: boolean;
  sendDegraded: boolean;
  sslExpiry: boolean;
  sslExpiryThreshold: number;
  autoSubscribe: boolean;
}

type Stamps = { id: number; created_at: string; updated_at: string | null };

describe('the model: what its named schema types stand for', () => {
  it('types the shared schemas as their fields say', () => {
    expectTypeOf<v.InferOutput<typeof AlertSettingsSchema>>().toEqualTypeOf<AlertSettings>();
    expectTypeOf<v.InferOutput<typeof RetryStrategySchema>>().toEqualTypeOf<RetryStrategy>();
    expectTypeOf<v.InferInput<typeof RetryStrategySchema>>().toEqualTypeOf<
      {
        type: OneOf<typeof RETRY_TYPES>;
        baseBackoffSeconds?: number | undefined;
        maxRetries?: number | undefined;
        maxDurationSeconds?: number | undefined;
        sameRegion?: boolean | undefined;
        onlyOn?: 'NETWORK_ERROR'[] | undefined;
      }
    >();
    expectTypeOf<v.InferOutput<typeof AlertChannelFlagsSchema>>().toEqualTypeOf<ChannelFlags>();
  });

  it('types a group, its create and update bodies, its record and its response', () => {
    expectTypeOf<v.InferOutput<typeof CheckGroupCreateSchema>>().toEqualTypeOf<GroupFields>();
    // Only the name is required to create one, and a group as answered is a valid body; PUT
    // requires the name too (the spec's update body).
    type CreateInput = v.InferInput<typeof CheckGroupCreateSchema>;
    expectTypeOf<keyof CreateInput>().toEqualTypeOf<keyof GroupFields>();
    expectTypeOf<{ name: string }>().toExtend<CreateInput>();
    expectTypeOf<{ muted: boolean }>().not.toExtend<CreateInput>();
    expectTypeOf<GroupFields>().toExtend<CreateInput>();
    expectTypeOf<v.InferOutput<typeof CheckGroupUpdateSchema>>().branded.toEqualTypeOf<
      Optional<Omit<GroupFields, 'name'>> & { name: string }
    >();
    expectTypeOf<v.InferOutput<typeof CheckGroupSchema>>().branded.toEqualTypeOf<GroupFields & Stamps & { accountId: string }>();
    expectTypeOf<v.InferOutput<typeof CheckGroupResponseSchema>>().branded.toEqualTypeOf<GroupFields & Stamps>();
  });

  it('types each channel type as its config, the flags and what a record or a response adds', () => {
    type Email = Extract<v.InferOutput<typeof AlertChannelSchema>, { type: 'EMAIL' }>;
    expectTypeOf<Email>().branded.toEqualTypeOf<
      { type: 'EMAIL'; config: { address: string } } & ChannelFlags & Stamps & { accountId: string }
    >();
    type Subscription = { id: number; checkId: string | null; groupId: number | null; activated: boolean };
    type Sms = Extract<v.InferOutput<typeof AlertChannelResponseSchema>, { type: 'SMS' }>;
    expectTypeOf<Sms>().branded.toEqualTypeOf<
      { type: 'SMS'; config: { number: string; name: string } } & ChannelFlags & Stamps & { subscriptions: Subscription[] }
    >();
    expectTypeOf<v.InferOutput<typeof AlertChannelSchema>['type']>().branded.toEqualTypeOf<
      'EMAIL' | 'WEBHOOK' | 'SMS' | 'CALL' | 'CHAT' | 'CHAT_APP' | 'PAGING_A' | 'PAGING_B'
    >();
  });

  it("keeps a stored group's and a group response's fields in the order they are answered", () => {
    const fields = Object.keys(CheckGroupCreateSchema.entries);
    expect(Object.keys(CheckGroupSchema.entries)).toEqual([...fields, 'id', 'accountId', 'created_at', 'updated_at']);
    expect(Object.keys(CheckGroupResponseSchema.entries)).toEqual([...fields, 'id', 'created_at', 'updated_at']);
    expect(fields.slice(0, 3)).toEqual(['name', 'activated', 'muted']);
  });

  it("keeps a channel's fields in the order they are answered: type, config, the flags, then the record's", () => {
    const flags = Object.keys(AlertChannelFlagsSchema.entries);
    expect(flags).toEqual(['sendRecovery', 'sendFailure', 'sendDegraded', 'sslExpiry', 'sslExpiryThreshold', 'autoSubscribe']);
    for (const option of AlertChannelSchema.options) {
      expect(Object.keys(option.entries)).toEqual(['type', 'config', ...flags, 'id', 'accountId', 'created_at', 'updated_at']);
    }
    for (const option of AlertChannelResponseSchema.options) {
      expect(Object.keys(option.entries)).toEqual(['type', 'config', ...flags, 'id', 'created_at', 'updated_at', 'subscriptions']);
    }
  });
});
