import * as v from 'valibot';

/**
 * What an outbox row carries, by `kind`: an alert for a channel, or a status-page subscriber's
 * email (a confirmation or an incident update; only ids, rendered when sent). The dispatcher
 * parses every claimed row with `OutboxPayloadSchema` before it sends anything.
 *
 * Rows outlive the version that wrote them (they wait in the outbox across a deploy, and
 * processes of two versions share one outbox while it rolls), so the schema reads:
 * - alert rows written before payloads had a kind: no `kind`, read as alerts, each field optional
 *   (the testing kit's outbox fixtures write such partial rows too);
 * - fields it does not know, which it keeps (a newer version's row is still delivered).
 */

/** The fields of an alert, as the run pipeline writes them (see `alertPayload` in rules/). */
const alertEntries = {
  alertType: v.string(),
  checkId: v.string(),
  checkName: v.string(),
  checkType: v.string(),
  checkResultId: v.nullable(v.string()),
  errorMessage: v.nullable(v.string()),
  groupName: v.nullable(v.string()),
  runLocation: v.nullable(v.string()),
  responseTime: v.nullable(v.number()),
  startedAt: v.nullable(v.string()),
  failingSince: v.nullable(v.string()),
  tags: v.array(v.string()),
  isReminder: v.boolean(),
  reminderSequence: v.number(),
  sslCheckDomain: v.nullable(v.string()),
  sslDaysRemaining: v.nullable(v.number()),
  /** The check's variables for webhook templates; never a secret one. */
  variables: v.record(v.string(), v.string()),
};

/** An alert for one channel. */
export const AlertPayloadSchema = v.looseObject({ kind: v.literal('alert'), ...alertEntries });
export type AlertPayload = v.InferOutput<typeof AlertPayloadSchema>;

/** An alert row without a kind (written before rows had one): any of the alert's fields may be missing. */
export const KindlessAlertPayloadSchema = v.looseObject({
  kind: v.exactOptional(v.undefined()),
  ...v.partial(v.object(alertEntries)).entries,
});
export type KindlessAlertPayload = v.InferOutput<typeof KindlessAlertPayloadSchema>;

/** A status-page subscriber's confirmation email; the token hash it was queued with (a newer request replaces it). */
export const ConfirmMailPayloadSchema = v.looseObject({ kind: v.literal('confirm'), subscriberId: v.string(), tokenHash: v.string() });
export type ConfirmMailPayload = v.InferOutput<typeof ConfirmMailPayloadSchema>;

/** An incident update for a confirmed status-page subscriber. */
export const UpdateMailPayloadSchema = v.looseObject({
  kind: v.literal('update'),
  subscriberId: v.string(),
  incidentId: v.string(),
  updateId: v.string(),
});
export type UpdateMailPayload = v.InferOutput<typeof UpdateMailPayloadSchema>;

export type SubscriberMailPayload = ConfirmMailPayload | UpdateMailPayload;
/** An alert as the dispatcher reads it: this version's, or an earlier one's without a kind. */
export type AnyAlertPayload = AlertPayload | KindlessAlertPayload;

export const OutboxPayloadSchema = v.variant('kind', [
  AlertPayloadSchema,
  KindlessAlertPayloadSchema,
  ConfirmMailPayloadSchema,
  UpdateMailPayloadSchema,
]);
export type OutboxPayload = v.InferOutput<typeof OutboxPayloadSchema>;

/** Whether a parsed payload is a subscriber's email (and not an alert). */
export function isSubscriberMail(p: OutboxPayload): p is SubscriberMailPayload {
  return p.kind === 'confirm' || p.kind === 'update';
}
