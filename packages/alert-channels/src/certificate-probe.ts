import { connect } from 'node:tls';
import type { CertificateProbe, CertificateProbeOptions } from '@vigil/core';

export interface TlsProbeOptions {
  /**
   * Where to connect for a domain (default: the checked address when given, else the domain).
   * Tests point it at a local server; it is the host's own choice, so it wins over the address.
   */
  target?: (host: string, port: number) => { host: string; port: number };
}

/**
 * Reads a certificate's expiry with a TLS handshake (SNI set to the domain). The certificate is
 * read whether or not it is trusted or already expired: the job reports on it, it does not trust it.
 * Given an `address` (the one the host's target policy checked), it connects there and looks
 * nothing up; the domain is still the SNI.
 */
export function tlsCertificateProbe(options: TlsProbeOptions = {}): CertificateProbe {
  return {
    expiresAt(host: string, port: number, signal: AbortSignal, probe: CertificateProbeOptions = {}): Promise<Date> {
      const to = options.target?.(host, port) ?? { host: probe.address ?? host, port };
      return new Promise<Date>((resolve, reject) => {
        if (signal.aborted) return reject(new Error('The certificate check was aborted'));
        const socket = connect({ host: to.host, port: to.port, servername: host, rejectUnauthorized: false });
        const onAbort = () => socket.destroy(new Error('The certificate check was aborted'));
        signal.addEventListener('abort', onAbort, { once: true });
        const done = () => signal.removeEventListener('abort', onAbort);
        socket.once('secureConnect', () => {
          const cert = socket.getPeerCertificate();
          socket.end();
          done();
          const at = cert && cert.valid_to ? new Date(cert.valid_to) : null;
          if (!at || Number.isNaN(at.getTime())) reject(new Error(`${host} sent no certificate`));
          else resolve(at);
        });
        socket.once('error', (err) => {
          done();
          reject(err);
        });
      });
    },
  };
}
