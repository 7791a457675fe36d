import { createToken } from './token.js';

/** Reads when a TLS certificate stops being valid: what the daily certificate-expiry job asks. */
export interface CertificateProbe {
  /** When the certificate `host` serves on `port` expires. Rejects when no certificate could be read. */
  expiresAt(host: string, port: number, signal: AbortSignal): Promise<Date>;
}

/** Optional: without a probe, certificates are only looked at by runs that report sslDaysRemaining. */
export const CERTIFICATE_PROBE = createToken<CertificateProbe>('vigil.certificateProbe');
