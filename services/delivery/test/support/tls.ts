import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificate {
  /** PEM file to trust with NODE_EXTRA_CA_CERTS. */
  certPath: string;
  cert: Buffer;
  key: Buffer;
  remove(): void;
}

/**
 * A self-signed certificate for `names` (DNS names and IP addresses), made by the openssl CLI at
 * test time. Receivers serve it; the delivery service trusts it through NODE_EXTRA_CA_CERTS.
 */
export function createTestCertificate(names: string[] = ['localhost', '127.0.0.1']): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'wl-cert-'));
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  const subjectAltName = names.map((name) => (/^[\d.]+$/.test(name) || name.includes(':') ? `IP:${name}` : `DNS:${name}`)).join(',');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyPath,
      '-out',
      certPath,
      '-days',
      '2',
      '-subj',
      `/CN=${names[0]}`,
      '-addext',
      `subjectAltName=${subjectAltName}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
    ],
    { stdio: 'pipe' },
  );
  return {
    certPath,
    cert: readFileSync(certPath),
    key: readFileSync(keyPath),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
