// etcd and kube-apiserver alone, on loopback only (random free ports on 127.0.0.1), with the run's
// throwaway PKI: enough to validate every object of a release for real (admission, schemas,
// field validation), in seconds. No controllers, no kubelet: nothing is ever scheduled.
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';

import { freePort, run, sleep } from '../../dev/src/util.mjs';
import { makePki, writeKubeconfig } from './pki.mjs';

async function httpGet(url, tls = {}) {
  return new Promise((resolve) => {
    const request = (url.startsWith('https:') ? https : http).get(url, { ...tls, timeout: 2_000 }, (response) => {
      let body = '';
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode, body }));
    });
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', (error) => resolve({ status: 0, body: error.message }));
  });
}

/** Polls until probe() is true; fails early when the named process died. */
async function waitFor(what, probe, { processes, name, timeoutMs = 60_000 }) {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (!processes.alive(name)) throw new Error(`${name} exited before ${what}:\n${processes.tail(name)}`);
    const result = await probe();
    if (result === true) return;
    last = result;
    await sleep(200);
  }
  throw new Error(`${what}: not within ${timeoutMs / 1000} s (last answer: ${last})\n${processes.tail(name)}`);
}

/**
 * Starts etcd, then kube-apiserver, in workDir; resolves { kubeconfig, server, kubectl(args, options) }
 * once the API server answers /readyz. The processes belong to `processes`, which stops them.
 */
export async function startApiServer({ processes, workDir, etcdBin, apiServerBin, kubectlBin }) {
  const [etcdClientPort, etcdPeerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
  const pki = await makePki(path.join(workDir, 'pki'));
  const etcdUrl = `http://127.0.0.1:${etcdClientPort}`;
  const peerUrl = `http://127.0.0.1:${etcdPeerPort}`;
  processes.start('etcd', etcdBin, [
    '--name=worklane-test',
    `--data-dir=${path.join(workDir, 'etcd')}`,
    `--listen-client-urls=${etcdUrl}`,
    `--advertise-client-urls=${etcdUrl}`,
    `--listen-peer-urls=${peerUrl}`,
    `--initial-advertise-peer-urls=${peerUrl}`,
    `--initial-cluster=worklane-test=${peerUrl}`,
    '--logger=zap',
    '--log-level=warn',
  ]);
  await waitFor(
    'etcd answered /health',
    async () => {
      const { status, body } = await httpGet(`${etcdUrl}/health`);
      return status === 200 && body.includes('"true"') ? true : `${status} ${body}`;
    },
    { processes, name: 'etcd' },
  );

  const server = `https://127.0.0.1:${apiPort}`;
  processes.start('kube-apiserver', apiServerBin, [
    `--etcd-servers=${etcdUrl}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${apiPort}`,
    `--tls-cert-file=${pki.server.cert}`,
    `--tls-private-key-file=${pki.server.key}`,
    `--client-ca-file=${pki.ca}`,
    `--service-account-key-file=${pki.serviceAccount.pub}`,
    `--service-account-signing-key-file=${pki.serviceAccount.key}`,
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    '--service-cluster-ip-range=10.96.0.0/16',
    '--authorization-mode=RBAC',
    '--enable-priority-and-fairness=false',
    '--kubelet-preferred-address-types=InternalIP',
    '--profiling=false',
    '--v=1',
  ]);
  const tls = { ca: fs.readFileSync(pki.ca), cert: fs.readFileSync(pki.admin.cert), key: fs.readFileSync(pki.admin.key) };
  await waitFor(
    'kube-apiserver answered /readyz',
    async () => {
      const { status, body } = await httpGet(`${server}/readyz`, tls);
      return status === 200
        ? true
        : `${status} ${
            body
              .split('\n')
              .filter((l) => l.includes('failed'))
              .join('; ') || body.slice(0, 200)
          }`;
    },
    { processes, name: 'kube-apiserver', timeoutMs: 90_000 },
  );

  const kubeconfig = writeKubeconfig(path.join(workDir, 'admin.kubeconfig'), { server, ca: pki.ca, user: pki.admin });
  // kubectl's and helm's discovery caches stay in the run's directory, never in ~/.kube.
  const kubeEnv = { KUBECONFIG: kubeconfig, KUBECACHEDIR: path.join(workDir, 'kube-cache') };
  /** Runs kubectl against this API server; resolves {code, stdout, stderr}. */
  const kubectl = (args, options = {}) => run(kubectlBin, [`--kubeconfig=${kubeconfig}`, ...args], { ...options, env: { ...process.env, ...kubeEnv } });
  return { kubeconfig, kubeEnv, server, kubectl };
}
