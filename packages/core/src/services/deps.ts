import type { CertificateProbe } from '../ports/certificate-probe.js';
import type { AlertTransport } from '../ports/alert-transport.js';
import type { CheckTypeDefinition } from '../model/check-type.js';
import type { Clock } from '../ports/clock.js';
import type { IdGenerator } from '../ports/id-generator.js';
import type { Logger } from '../ports/logger.js';
import type { Metrics } from '../ports/metrics.js';
import type { Runner } from '../ports/runner.js';
import type { TargetPolicy } from '../runner-kit/target-policy.js';
import type { SecretBox } from '../ports/secret-box.js';
import type { SubscriberMailer } from '../ports/subscriber-mailer.js';
import type { VigilStorage } from '../ports/storage.js';

/** What every application service is built from; the container assembles it once. */
export interface ServiceDeps {
  storage: VigilStorage;
  secretBox: SecretBox;
  clock: Clock;
  ids: IdGenerator;
  logger: Logger;
  /** Where the engine and services count what they do (absent: counted nowhere). */
  metrics?: Metrics;
  /** Registered runners, by check type. */
  runners: ReadonlyMap<string, Runner>;
  /** Check types plugins added (`defineCheckType`), by check type. */
  checkTypes?: ReadonlyMap<string, CheckTypeDefinition>;
  /** Registered alert transports, by channel type. */
  transports: ReadonlyMap<string, AlertTransport>;
  /** Sends status-page subscribers their emails (null: none registered, pages take no subscribers). */
  subscriberMailer?: SubscriberMailer | null;
  /** Reads certificate expiry for the daily certificate job (null: none registered). */
  certificateProbe?: CertificateProbe | null;
  /** The location a check with no locations runs in. */
  defaultLocation: string;
  /**
   * Which addresses checks and alert deliveries may reach (absent: every address). With a host's
   * per-account policy it carries `forAccount`: read it with `policyForAccount(policy, accountId)`.
   */
  targetPolicy?: TargetPolicy;
}

/** The current time as the ISO string records carry. */
export function nowIso(deps: Pick<ServiceDeps, 'clock'>): string {
  return deps.clock.now().toISOString();
}
