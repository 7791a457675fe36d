/** A client certificate as a run uses it: key and passphrase opened. */
export interface OpenedCertificate {
  /** The stored host pattern that matched (`api.example.com`, `*.example.com`). */
  host: string;
  cert: string;
  ca: string | null;
  key: string | null;
  passphrase: string | null;
}

/**
 * The client certificates (mutual TLS) of the account a run belongs to, as the engine hands them
 * to a runner on its job. A certificate is read and its key opened only when a runner asks for a
 * host, and lives only as long as the run holds it.
 */
export interface ClientCertificateLookup {
  /** The certificate for a target host: an exact host first, else a one-label wildcard; null when none. */
  forHost(hostname: string): Promise<OpenedCertificate | null>;
}
