#!/usr/bin/env node
// `npm run test:kubernetes`: the chart against a real Kubernetes API server, and the alerts
// under promtool. Phases, each timed:
//   provision  etcd (Debian), kube-apiserver and kubectl (built from the Go module proxy), helm,
//              promtool, through the repository's one provisioning path (cached per machine)
//   (a)        etcd + kube-apiserver on loopback with a throwaway PKI; every value set rendered
//              and every object validated by a server-side dry run, without and then with the
//              Prometheus Operator's CRDs
//   (i)        every alert and recording rule under `promtool test rules`: each alert fires in
//              its scenario and stays silent otherwise
// Then, as root, a real cluster (WORKLANE_K8S_CLUSTER=0 leaves it out; `only` runs just it):
//   (b)        every service image built with buildah from tools/images/Dockerfile, on a Node base
//              image made locally (no registry is reachable)
//   (c)        a single-node Kubernetes entirely inside a network namespace the run creates, the
//              images imported into its containerd
//   (e)        helm install of charts/worklane with its defaults plus the environment's values,
//              every pod Ready, helm test; kube-router, started with the node in (c), enforces
//              the chart's NetworkPolicies from then on
//   (k)        a pod outside the release cannot connect to the token service (nor any other port
//              of the release), a gateway pod can, and the blocking is the controller's
//   (f)        the API conformance suite (tools/contract-tests) run unchanged through the
//              gateway's Service, and an issue event delivered to an HTTPS receiver pod
//   (g)        helm upgrade under load to a tag whose only change is an expand migration,
//              then helm rollback: 0 failed requests, every event received, the migration
//              applied before any new pod, old pods serving on the migrated schema
//   (h)        faults under load (a pod of each service, a NATS server, PostgreSQL): 0 events
//              lost, the API's recovery time printed (WORKLANE_K8S_FAULTS=0 skips it)
//   (j)        one trace: an API call creating an issue, through NATS, to the delivery's
//              outbound POST, found whole in an OpenTelemetry Collector in the cluster (built from
//              the Go module proxy), every span with the chart's resource attributes
//   teardown   every process stopped by its pid (also on failure or Ctrl-C), containers, mounts,
//              cgroups and the namespace removed, host-wide settings restored, the run's
//              directory removed; caches (Go builds, images, containerd's store) kept
// Ends with `N passed, M failed`; exits non-zero when anything failed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { provision, useProjectNode } from '../../dev/src/provision/index.mjs';
import { UserError, say } from '../../dev/src/util.mjs';

await useProjectNode();

const { Suite } = await import('../src/suite.mjs');
const { Processes } = await import('../src/processes.mjs');
const { startApiServer } = await import('../src/api-server.mjs');
const { NAMESPACE, installMonitoringCrds, validateValueSets, noCrdNotes, refusesBareDefaults } = await import('../src/chart-validation.mjs');
const { testAlertRules } = await import('../src/alert-rules.mjs');
const host = await import('../src/host.mjs');

const clusterMode = process.env.WORKLANE_K8S_CLUSTER ?? '1';
const asRoot = process.getuid?.() === 0;
const withCluster = (clusterMode === '1' || clusterMode === 'only') && asRoot;
const apiServerPhases = clusterMode !== 'only';

const started = Date.now();
const suite = new Suite();
const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wl-kubernetes-'));
const processes = new Processes(workDir);
const keep = process.env.WORKLANE_KEEP_KUBERNETES_DIR === '1';

let cleaned = false;
let clusterHandle = null;
async function cleanUp() {
  if (cleaned) return;
  cleaned = true;
  if (clusterHandle) {
    const { stopCluster } = await import('../src/cluster.mjs');
    for (const line of await stopCluster(clusterHandle).catch((error) => [`stopping the cluster: ${error.message}`])) say(line);
  }
  await processes.stopAll();
  const state = host.readState();
  if (state && state.owner === process.pid) {
    for (const line of await host.undo({ ...state, pids: [], keepWorkDir: true })) say(line);
    host.forgetState();
  }
  if (keep) say(`kept ${workDir} (WORKLANE_KEEP_KUBERNETES_DIR=1)`);
  else if (host.mountsUnder([workDir]).length > 0) say(`kept ${workDir}: something is still mounted under it (${host.mountsUnder([workDir])[0]})`);
  else fs.rmSync(workDir, { recursive: true, force: true });
}

// A stray rejection fails the run instead of ending it before its teardown.
process.on('unhandledRejection', (error) => suite.fail(`unexpected: ${error?.stack ?? error}`));

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    say(`${signal}: stopping what the suite started`);
    cleanUp().finally(() => process.exit(130));
  });
}

let tools;
let cluster;
try {
  // The cluster needs root (network namespace, mounts, cgroups): without it the run fails here
  // rather than passing on the API-server phases alone.
  if (clusterMode !== '0' && !asRoot) suite.fail('the cluster phases need root: run as root, or WORKLANE_K8S_CLUSTER=0 for the API-server phases alone');
  if (withCluster) await host.sweepLeftovers();
  const clusterTools = ['kubernetesNode', 'buildah', 'nodeBaseImage', 'nodeRuntime', 'coredns', 'pause', 'kubeRouter', 'natsServer'];
  // The trace phase's OpenTelemetry Collector, only when that phase is to run.
  if (withCluster && (await import('../src/cluster-phases.mjs')).phaseSelected('j')) clusterTools.push('otelCollector');
  await suite.phase(`provision: etcd, kube-apiserver, kubectl, helm, promtool${withCluster ? ", and the cluster's tools" : ''}`, async () => {
    tools = await provision(['etcd', 'kubernetes', 'helm', 'promtool', ...(withCluster ? clusterTools : [])]);
  });

  if (tools && apiServerPhases) {
    await suite.phase('(a) etcd and kube-apiserver on loopback', async () => {
      cluster = await startApiServer({
        processes,
        workDir,
        etcdBin: tools.etcd.bin,
        apiServerBin: tools.kubernetes.bins['kube-apiserver'],
        kubectlBin: tools.kubernetes.bins.kubectl,
      });
      await suite.check(`the API server reports Kubernetes ${tools.kubernetes.version}`, async () => {
        const { stdout } = await cluster.kubectl(['version', '-o', 'json']);
        const reported = JSON.parse(stdout).serverVersion?.gitVersion;
        if (reported !== `v${tools.kubernetes.version}`) throw new Error(`it reports ${reported}`);
      });
      const created = await cluster.kubectl(['create', 'namespace', NAMESPACE]);
      if (created.code !== 0) throw new Error(`could not create the namespace: ${created.stderr}`);
      // A real cluster's controller manager gives every namespace its `default` ServiceAccount; a
      // bare Pod (the chart's helm test) is refused without it, and this API server runs alone.
      const account = await cluster.kubectl(['create', 'serviceaccount', 'default', '--namespace', NAMESPACE]);
      if (account.code !== 0) throw new Error(`could not create the default ServiceAccount: ${account.stderr}`);
    });
  }

  if (cluster && apiServerPhases) {
    const context = { helmBin: tools.helm.bin, kubeconfig: cluster.kubeconfig, kubeEnv: cluster.kubeEnv, kubectl: cluster.kubectl };
    await suite.phase('(a) every value set, cluster without the Prometheus Operator CRDs', async () => {
      await suite.check('the bare defaults are refused with a message naming database.url', () => refusesBareDefaults(context));
      await validateValueSets(suite, { ...context, withCrds: false });
      await suite.check('the install notes say which monitoring objects were left out', () => noCrdNotes(context));
    });
    await suite.phase('(a) every value set, cluster with the Prometheus Operator CRDs', async () => {
      await installMonitoringCrds(cluster.kubectl);
      await validateValueSets(suite, { ...context, withCrds: true });
    });
  }

  if (tools && apiServerPhases) {
    await suite.phase('(i) alerts and recording rules under promtool', async () => {
      await testAlertRules(suite, { helmBin: tools.helm.bin, promtoolBin: tools.promtool.bin, workDir });
    });
  }
  if (cluster) {
    // Phase (a)'s API server is not needed any more: the cluster phases start their own.
    for (const entry of [...processes.running].reverse()) await processes.stop(entry);
  }

  if (tools && withCluster) {
    const { runClusterPhases } = await import('../src/cluster-phases.mjs');
    await runClusterPhases({
      suite,
      tools,
      processes,
      workDir,
      onCluster: (handle) => {
        clusterHandle = handle;
      },
    });
  }
} catch (error) {
  suite.fail(error instanceof UserError ? error.message : (error?.stack ?? String(error)));
} finally {
  const teardownStarted = Date.now();
  await cleanUp();
  suite.phases.push({ name: 'teardown', ms: Date.now() - teardownStarted });
}
process.exit(suite.summary(Date.now() - started));
