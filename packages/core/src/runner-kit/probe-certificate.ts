import type { CertificateProbe } from '../ports/certificate-probe.js';
import { lookupChecked } from './target-lookup.js';
import type { TargetPolicy, TargetRefusal } from './target-policy.js';

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
