import { lookupChecked } from '../runner-kit/target-lookup.js';
import type { TargetPolicy, TargetRefusal } from '../runner-kit/target-policy.js';
import { createToken } from './token.js';

export interface CertificateProbeOptions {
  /**
   * The address to connect to, already looked up and checked against the host's target policy.
   * The probe connects there and nowhere else (no lookup of its own), with the domain as SNI.
   */
  address?: string;
}

/** Reads when a TLS certificate stops being valid: what the daily certificate-expiry job asks. */
export interface CertificateProbe {
  /**
   * When the certificate `host` serves on `port` expires. Rejects when no certificate could be
   * read. A probe of a host's own must connect to `options.address` when it is given.
   */
  expiresAt(host: string, port: number, signal: AbortSignal, options?: CertificateProbeOptions): Promise<Date>;
}

/** Optional: without a probe, certificates are only looked at by runs that report sslDaysRemaining. */
export const CERTIFICATE_PROBE = createToken<CertificateProbe>('vigil.certificateProbe');

/**
 * Reads a certificate's expiry under the host's target policy. When the policy refuses internal
 * addresses, the domain is looked up once and every address checked; a refusal opens no
 * connection, and otherwise the probe connects to the address checked. Rejects as the lookup or
 * the probe does.
 */
export async function probeCertificate(
  probe: CertificateProbe,
  policy: TargetPolicy | null | undefined,
  host: string,
  port: number,
  signal: AbortSignal,
): Promise<{ expiresAt: Date; refusal: null } | { expiresAt: null; refusal: TargetRefusal }> {
  if (!policy?.refuseInternalAddresses) return { expiresAt: await probe.expiresAt(host, port, signal), refusal: null };
  const checked = await lookupChecked(policy, host);
  if (checked.refusal) return { expiresAt: null, refusal: checked.refusal };
  return { expiresAt: await probe.expiresAt(host, port, signal, { address: checked.addresses[0].address }), refusal: null };
}
