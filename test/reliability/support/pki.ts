import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A CA, a server certificate it signed (127.0.0.1 and *.mtls.test), and a client certificate whose key a passphrase encrypts. */
export interface Pki {
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  /** PEM, encrypted with `passphrase`. */
  clientKey: string;
}

/** Makes a throwaway PKI with the openssl command line; the client key is encrypted with `passphrase`. */
export function makePki(passphrase: string): Pki {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-reliability-pki-'));
  const f = (name: string) => join(dir, name);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'];
  try {
    ssl('req', '-x509', ...ec, '-nodes', '-days', '2', '-subj', '/CN=Vigil Reliability CA',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign', '-keyout', f('ca.key'), '-out', f('ca.crt'));
    const sign = (name: string, cn: string, ext: string, keyArgs: string[]) => {
      writeFileSync(f(`${name}.ext`), ext);
      ssl('req', ...ec, ...keyArgs, '-subj', `/CN=${cn}`, '-keyout', f(`${name}.key`), '-out', f(`${name}.csr`));
      ssl('x509', '-req', '-in', f(`${name}.csr`), '-CA', f('ca.crt'), '-CAkey', f('ca.key'), '-CAcreateserial', '-days', '2', '-extfile', f(`${name}.ext`), '-out', f(`${name}.crt`));
    };
    sign('server', 'localhost', 'subjectAltName=DNS:localhost,DNS:*.mtls.test,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n', ['-nodes']);
    sign('client', 'vigil-client', 'extendedKeyUsage=clientAuth\n', ['-passout', `pass:${passphrase}`]);
    const read = (name: string) => readFileSync(f(name), 'utf8');
    return { caCert: read('ca.crt'), serverCert: read('server.crt'), serverKey: read('server.key'), clientCert: read('client.crt'), clientKey: read('client.key') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
