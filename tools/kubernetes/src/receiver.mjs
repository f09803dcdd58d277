// The test cluster's webhook receiver: an HTTPS server in a pod of its own namespace, which the
// release's delivery service posts to like any customer endpoint. It keeps every request it gets
// (headers and the raw body) in memory and lists them on GET /received, so the suite can check what
// arrived: each event by id, its signature, its body.
//
// Its certificate is signed by a CA made for the run; the delivery pods trust that CA through the
// chart's per-service extraEnv/extraVolumes/extraVolumeMounts (NODE_EXTRA_CA_CERTS), and its
// address range, the cluster's pod range, is let through by the chart's `webhookAllowedCidrs`.
// A headless Service gives it a name that resolves straight to the pod's address (no Service
// address to allow as well).
import fs from 'node:fs';
import path from 'node:path';

import { runChecked } from '../../dev/src/util.mjs';
import { POD_CIDR } from './cluster.mjs';
import { waitUntil } from './commands.mjs';

export const RECEIVER_NAMESPACE = 'worklane-receiver';
export const RECEIVER_NAME = 'webhook-receiver';
export const RECEIVER_HOST = `${RECEIVER_NAME}.${RECEIVER_NAMESPACE}.svc.cluster.local`;
export const RECEIVER_PORT = 8443;
/** The Secret (in the release's namespace) holding the CA the delivery pods trust. */
export const RECEIVER_CA_SECRET = 'webhook-receiver-ca';
const CA_MOUNT = '/etc/worklane-test-receiver';

/** The receiver, in the image's Node: every POST kept; GET /received?from=N lists them from the N-th on. */
const RECEIVER_SCRIPT = `
const fs = require('node:fs');
const https = require('node:https');
const received = [];
const server = https.createServer({ key: fs.readFileSync('/tls/tls.key'), cert: fs.readFileSync('/tls/tls.crt') }, (req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const url = new URL(req.url, 'https://receiver');
    if (req.method === 'GET' && url.pathname === '/received') {
      const from = Math.max(0, Number(url.searchParams.get('from')) || 0);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ total: received.length, items: received.slice(from) }));
      return;
    }
    if (req.method === 'GET' && url.pathname === '/healthz') {
      res.writeHead(200);
      res.end('ok');
      return;
    }
    received.push({ at: Date.now(), method: req.method, path: url.pathname, headers: req.headers, body: Buffer.concat(chunks).toString('base64') });
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('received');
  });
});
server.keepAliveTimeout = 60000;
server.listen(${RECEIVER_PORT}, '0.0.0.0', () => console.log('receiver listening on ${RECEIVER_PORT}'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

/** A CA and the receiver's serving certificate (its Service name as subject alternative name), made with openssl in dir. */
export async function makeReceiverPki(dir) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const openssl = (args) => runChecked('openssl', args, { cwd: dir });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await openssl(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=worklane-test-receiver-ca']);
  fs.writeFileSync(
    path.join(dir, 'receiver.ext'),
    ['basicConstraints=CA:FALSE', 'keyUsage=digitalSignature', 'extendedKeyUsage=serverAuth', `subjectAltName=DNS:${RECEIVER_HOST}`, ''].join('\n'),
  );
  await openssl(['req', '-new', ...ec, '-keyout', 'receiver.key', '-out', 'receiver.csr', '-subj', `/CN=${RECEIVER_HOST}`]);
  await openssl(['x509', '-req', '-in', 'receiver.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-out', 'receiver.crt', '-extfile', 'receiver.ext']);
  return { ca: path.join(dir, 'ca.crt'), cert: path.join(dir, 'receiver.crt'), key: path.join(dir, 'receiver.key') };
}

/** The receiver's objects: namespace, TLS Secret, script ConfigMap, Pod and headless Service; plus the CA Secret in the release's namespace. */
export function receiverManifest({ image, pki, releaseNamespace }) {
  const labels = { 'app.kubernetes.io/name': RECEIVER_NAME };
  const read = (file) => fs.readFileSync(file, 'utf8');
  const objects = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: RECEIVER_NAMESPACE } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: releaseNamespace } },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: { name: `${RECEIVER_NAME}-tls`, namespace: RECEIVER_NAMESPACE },
      stringData: { 'tls.crt': read(pki.cert), 'tls.key': read(pki.key) },
    },
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: RECEIVER_CA_SECRET, namespace: releaseNamespace }, stringData: { 'ca.crt': read(pki.ca) } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: RECEIVER_NAME, namespace: RECEIVER_NAMESPACE }, data: { 'receiver.js': RECEIVER_SCRIPT } },
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: RECEIVER_NAME, namespace: RECEIVER_NAMESPACE, labels },
      spec: {
        automountServiceAccountToken: false,
        enableServiceLinks: false,
        securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } },
        containers: [
          {
            name: 'receiver',
            image,
            imagePullPolicy: 'Never',
            command: ['node', '/receiver/receiver.js'],
            ports: [{ name: 'https', containerPort: RECEIVER_PORT }],
            readinessProbe: { httpGet: { path: '/healthz', port: RECEIVER_PORT, scheme: 'HTTPS' }, periodSeconds: 2 },
            volumeMounts: [
              { name: 'script', mountPath: '/receiver', readOnly: true },
              { name: 'tls', mountPath: '/tls', readOnly: true },
            ],
            securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
            resources: { requests: { cpu: '20m', memory: '64Mi' }, limits: { memory: '256Mi' } },
          },
        ],
        volumes: [
          { name: 'script', configMap: { name: RECEIVER_NAME } },
          { name: 'tls', secret: { secretName: `${RECEIVER_NAME}-tls` } },
        ],
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: RECEIVER_NAME, namespace: RECEIVER_NAMESPACE },
      spec: { clusterIP: 'None', selector: labels, ports: [{ name: 'https', port: RECEIVER_PORT, targetPort: RECEIVER_PORT }] },
    },
  ];
  return { apiVersion: 'v1', kind: 'List', items: objects };
}

/**
 * The chart values that let the release deliver to the receiver: its range through
 * `webhookAllowedCidrs`, and its CA trusted by the delivery pods (NODE_EXTRA_CA_CERTS from a
 * mounted Secret, through the chart's per-service extraEnv, extraVolumes and extraVolumeMounts).
 */
export function receiverValues() {
  return {
    webhookAllowedCidrs: [POD_CIDR],
    delivery: {
      extraEnv: [{ name: 'NODE_EXTRA_CA_CERTS', value: `${CA_MOUNT}/ca.crt` }],
      extraVolumes: [{ name: 'receiver-ca', secret: { secretName: RECEIVER_CA_SECRET } }],
      extraVolumeMounts: [{ name: 'receiver-ca', mountPath: CA_MOUNT, readOnly: true }],
    },
  };
}

/** Creates the receiver (and the CA Secret the release mounts); resolves once its pod is Ready. */
export async function startReceiver(cluster, { image, workDir, releaseNamespace }) {
  const pki = await makeReceiverPki(path.join(workDir, 'receiver-pki'));
  const applied = await cluster.kubectl(['apply', '-f', '-'], { input: JSON.stringify(receiverManifest({ image, pki, releaseNamespace })) });
  if (applied.code !== 0) throw new Error(`could not create the webhook receiver: ${applied.stderr}`);
  let podIp = '';
  await waitUntil(
    'the webhook receiver pod is Ready',
    async () => {
      const { stdout } = await cluster.kubectl([
        'get',
        'pod',
        '-n',
        RECEIVER_NAMESPACE,
        RECEIVER_NAME,
        '-o',
        'jsonpath={.status.conditions[?(@.type=="Ready")].status} {.status.podIP} {.status.phase}',
      ]);
      const [ready, ip, phase] = stdout.trim().split(' ');
      podIp = ip ?? '';
      return ready === 'True' ? true : `${phase ?? 'no phase'} ${ready ?? ''}`;
    },
    { timeoutMs: 180_000, intervalMs: 500 },
  );
  return new Receiver(cluster, { pki, podIp });
}

/** What the suite reads of the receiver, from the cluster's namespace (the receiver is reached at its pod address). */
export class Receiver {
  constructor(cluster, { pki, podIp }) {
    this.cluster = cluster;
    this.pki = pki;
    this.podIp = podIp;
    this.url = `https://${RECEIVER_HOST}:${RECEIVER_PORT}`;
  }

  /** Every request received from the from-th on: [{at, method, path, headers, body: Buffer}]. */
  async received(from = 0) {
    const script = `
const https = require('node:https');
const [ip, host, port, ca, from] = process.argv.slice(1);
const request = https.get({ host: ip, port, servername: host, path: '/received?from=' + from, ca: require('node:fs').readFileSync(ca), timeout: 10000 }, (res) => {
  const chunks = [];
  res.on('data', (c) => chunks.push(c));
  // Exit once the pipe has taken the whole answer: exiting at once cuts a large one short.
  res.on('end', () => process.stdout.write(Buffer.concat(chunks), () => process.exit(res.statusCode === 200 ? 0 : 1)));
});
request.on('timeout', () => request.destroy(new Error('timeout')));
request.on('error', (e) => { console.error(e.message); process.exit(1); });
`;
    const { code, stdout, stderr } = await this.cluster.inNamespace(process.execPath, ['-e', script, this.podIp, RECEIVER_HOST, String(RECEIVER_PORT), this.pki.ca, String(from)]);
    if (code !== 0) throw new Error(`reading the receiver failed: ${stderr || stdout}`);
    const { items } = JSON.parse(stdout);
    return items.map((item) => ({ ...item, body: Buffer.from(item.body, 'base64') }));
  }
}
