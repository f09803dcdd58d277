// A throwaway PKI for one run, made with openssl in the run's temporary directory: a CA, the API
// server's serving certificate, an admin client in system:masters, and the service-account
// signing key pair. EC P-256 keys: quick to make, accepted everywhere Kubernetes needs a key.
import fs from 'node:fs';
import path from 'node:path';

import { runChecked } from '../../dev/src/util.mjs';

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

async function openssl(args, cwd) {
  await runChecked('openssl', args, { cwd });
}

/** A key and a certificate signed by the CA; `extensions` go to the certificate as written. */
async function issue(dir, name, subject, extensions) {
  const ext = path.join(dir, `${name}.ext`);
  fs.writeFileSync(ext, `${extensions.join('\n')}\n`);
  await openssl(['req', '-new', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject], dir);
  await openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-out', `${name}.crt`, '-extfile', ext], dir);
  return { cert: path.join(dir, `${name}.crt`), key: path.join(dir, `${name}.key`) };
}

/**
 * Makes the PKI in dir. `serverNames` and `serverIps` are the API server's subject alternative
 * names (127.0.0.1 and the first service address, 10.96.0.1, are always there).
 */
export async function makePki(dir, { serverNames = [], serverIps = [] } = {}) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  await openssl(['req', '-x509', ...EC, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=worklane-test-ca'], dir);
  const names = ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local', 'localhost', ...serverNames];
  const ips = ['127.0.0.1', '10.96.0.1', ...serverIps];
  const server = await issue(dir, 'apiserver', '/CN=kube-apiserver', [
    'basicConstraints=CA:FALSE',
    'keyUsage=digitalSignature,keyEncipherment',
    'extendedKeyUsage=serverAuth',
    `subjectAltName=${[...names.map((n) => `DNS:${n}`), ...ips.map((ip) => `IP:${ip}`)].join(',')}`,
  ]);
  const admin = await issue(dir, 'admin', '/O=system:masters/CN=worklane-admin', [
    'basicConstraints=CA:FALSE',
    'keyUsage=digitalSignature,keyEncipherment',
    'extendedKeyUsage=clientAuth',
  ]);
  await openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-out', 'sa.key'], dir);
  await openssl(['pkey', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], dir);
  return {
    ca: path.join(dir, 'ca.crt'),
    server,
    admin,
    serviceAccount: { key: path.join(dir, 'sa.key'), pub: path.join(dir, 'sa.pub') },
  };
}

/** A kubeconfig for `user` (a {cert, key} pair) at `server`, written to file. */
export function writeKubeconfig(file, { server, ca, user, name = 'worklane-test' }) {
  const text = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `  - name: ${name}`,
    '    cluster:',
    `      server: ${server}`,
    `      certificate-authority: ${ca}`,
    'users:',
    `  - name: ${name}`,
    '    user:',
    `      client-certificate: ${user.cert}`,
    `      client-key: ${user.key}`,
    'contexts:',
    `  - name: ${name}`,
    '    context:',
    `      cluster: ${name}`,
    `      user: ${name}`,
    `current-context: ${name}`,
    '',
  ].join('\n');
  fs.writeFileSync(file, text, { mode: 0o600 });
  return file;
}
