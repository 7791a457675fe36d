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

