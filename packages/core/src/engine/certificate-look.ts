/*
 * Beside the run pipeline, the certificate look: the daily job (a check's `certificate` schedule
 * entry) that reads when the certificate of the check's domain expires and, through the alert
 * step, alerts the channels whose sslExpiry threshold it is under.
 */
import type { CertificateProbe } from '../ports/certificate-probe.js';
import { probeCertificate } from '../runner-kit/probe-certificate.js';
import { policyForAccount } from '../runner-kit/target-policy.js';
import { evaluateSsl, INITIAL_ALERT_STATE } from '../rules/alerting.js';
import { certificateTarget } from '../rules/schedule-plan.js';
import type { CheckForRun } from '../services/checks.js';
import type { ServiceDeps } from '../services/deps.js';
import type { MaintenanceWindowService } from '../services/maintenance-windows.js';
import { alertMessages, type AlertStep } from './alert-step.js';
import { maintenanceEffect } from './run-spec.js';

const SSL_EVERY_MS = 24 * 3_600_000;
/** A certificate that could not be read is looked at again after this, not tomorrow. */
export const FAILED_CERTIFICATE_RETRY_MS = 3_600_000;

export class CertificateLook {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly maintenanceWindows: MaintenanceWindowService,
    private readonly alerts: AlertStep,
    /** Time limit of one look. */
    private readonly timeoutMs: number,
  ) {}

  /**
   * The certificate look of a check: alerts at most once a day. Answers when to look again (null:
   * the check no longer watches a certificate).
   */
  async look(accountId: string, forRun: CheckForRun): Promise<Date | null> {
    const { clock } = this.deps;
    const probe = this.deps.certificateProbe;
    const check = forRun.check;
    const target = certificateTarget(check);
    if (!target) return null;
    const started = clock.now();
    if (!probe) return new Date(started.getTime() + SSL_EVERY_MS);
    const read = await this.readExpiry(probe, { accountId, checkId: check.id, ...target }, started);
    if ('lookAgainAt' in read) return read.lookAgainAt;
    const { expiresAt } = read;
    const now = clock.now();
    const days = Math.floor((expiresAt.getTime() - now.getTime()) / 86_400_000);
    const effect = await maintenanceEffect(this.maintenanceWindows, accountId, forRun, now);
    if (forRun.muted || effect.silenced) return new Date(started.getTime() + SSL_EVERY_MS);
    await this.alerts.step(accountId, check.id, async (stored) => {
      const ssl = evaluateSsl(stored ?? INITIAL_ALERT_STATE, days, now);
      if (!ssl.alert) return null;
      return { next: ssl.state, messages: await alertMessages(this.deps, accountId, forRun, null, ssl.state, ['ALERT_SSL'], now, days) };
    });
    return new Date(started.getTime() + SSL_EVERY_MS);
  }

  /**
   * When a check's certificate expires, read under its account's target policy; or, when it could
   * not be read, when to look again. The logs name the check, its domain and why, nothing else.
   */
  private async readExpiry(
    probe: CertificateProbe,
    target: { accountId: string; checkId: string; host: string; port: number },
    started: Date,
  ): Promise<{ expiresAt: Date } | { lookAgainAt: Date }> {
    const { accountId, checkId, host, port } = target;
    const { logger } = this.deps;
    try {
      const policy = await policyForAccount(this.deps.targetPolicy, accountId);
      const read = await probeCertificate(probe, policy, host, port, AbortSignal.timeout(this.timeoutMs));
      if (read.expiresAt) return { expiresAt: read.expiresAt };
      // Nothing was connected. The domain's addresses will not leave the refused range within
      // the hour, so the next look is the daily one.
      logger.warn('certificates: the target policy refused a certificate look', { accountId, checkId, host, address: read.refusal.address, reason: read.refusal.reason });
      return { lookAgainAt: new Date(started.getTime() + SSL_EVERY_MS) };
    } catch (err) {
      // Unreachable now: look again in an hour rather than tomorrow.
      logger.warn('certificates: could not read a certificate', { accountId, checkId, host, error: err instanceof Error ? err.message : String(err) });
      return { lookAgainAt: new Date(started.getTime() + FAILED_CERTIFICATE_RETRY_MS) };
    }
  }
}
