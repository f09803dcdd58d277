// One provisioning path for `npm start`, `npm test` and CI: each tool the scripts need is found
// (at a checked version), or installed, or built, and the time each took is printed.
//
//   provision(['postgres', 'natsServer', 'helm', 'chromium']) -> {postgres, natsServer, helm, chromium}
//   provision(['etcd', 'kubernetes', 'promtool', 'helm']) for `npm run test:kubernetes`, and for its
//     cluster phases ['buildah', 'nodeBaseImage', 'nodeRuntime', 'kubernetesNode', 'coredns', 'pause'],
//     and 'otelCollector' for its trace phase, 'kubeRouter' for its network policies
//   provision(['buf']) for the proto contract checks (proto/test), which `npm test` runs
//
// Node itself is provisioned first, by useProjectNode() (node.mjs), before anything else runs.
import path from 'node:path';

import { formatMs, repoRoot, say } from '../util.mjs';
import { ensureChromium } from './chromium.mjs';
import { ensureCoreDns, ensurePause } from './cluster-programs.mjs';
import { ensureBuildah, ensureNodeRuntime } from './containers.mjs';
import { ensureEtcd } from './etcd.mjs';
import { GO_TOOLS, ensureGoTool } from './go-tools.mjs';
import { ensureKubeRouter } from './kube-router.mjs';
import { CLUSTER_BINARIES, ensureKubernetes } from './kubernetes.mjs';
import { ensureNodeBaseImage } from './node-base-image.mjs';
import { ensureOtelCollector } from './otel-collector.mjs';
import { ensurePostgres } from './postgres.mjs';
import { ensureSchemathesis } from './schemathesis.mjs';

const PROVIDERS = {
  postgres: async () => {
    const pg = await ensurePostgres();
    return { ...pg, bin: pg.binDir, label: `PostgreSQL ${pg.version}` };
  },
  natsServer: async () => labelled(await ensureGoTool(GO_TOOLS.natsServer), 'nats-server'),
  helm: async () => labelled(await ensureGoTool(GO_TOOLS.helm), 'helm'),
  chromium: async () => labelled(await ensureChromium(), 'Chromium'),
  schemathesis: async () => labelled(await ensureSchemathesis(), 'schemathesis'),
  etcd: async () => labelled(await ensureEtcd(), 'etcd'),
  kubernetes: async () => labelled(await ensureKubernetes(), 'kube-apiserver and kubectl'),
  kubernetesNode: async () => labelled(await ensureKubernetes(CLUSTER_BINARIES), CLUSTER_BINARIES.join(', ')),
  buildah: async () => labelled(await ensureBuildah(), 'buildah'),
  nodeBaseImage: async () => ({ ...(await ensureNodeBaseImage()), label: 'the Node base image' }),
  nodeRuntime: async () => labelled(await ensureNodeRuntime(), 'containerd, runc, CNI plugins'),
  coredns: async () => labelled(await ensureCoreDns(), 'CoreDNS'),
  pause: async () => ({ ...(await ensurePause()), label: 'the pause program' }),
  kubeRouter: async () => labelled(await ensureKubeRouter(), 'kube-router (network policies)'),
  otelCollector: async () => labelled(await ensureOtelCollector(), 'the OpenTelemetry Collector'),
  promtool: async () => labelled(await ensureGoTool(GO_TOOLS.promtool), 'promtool'),
  buf: async () => labelled(await ensureGoTool(GO_TOOLS.buf), 'buf'),
};

const labelled = (found, name) => ({ ...found, label: `${name} ${found.version}` });
const shortPath = (p) => (p.startsWith(repoRoot) ? path.relative(repoRoot, p) : p);

/** Provisions the named tools concurrently (apt installs queue up); resolves {name: {bin, version, ...}}. */
export async function provision(names) {
  const started = Date.now();
  const entries = await Promise.all(
    names.map(async (name) => {
      const provider = PROVIDERS[name];
      if (!provider) throw new Error(`provision: unknown tool ${name}`);
      const toolStarted = Date.now();
      const result = await provider();
      say(`  ${result.label}: ${shortPath(result.bin)} (${formatMs(Date.now() - toolStarted)})`);
      return [name, result];
    }),
  );
  say(`tools ready in ${formatMs(Date.now() - started)}`);
  return Object.fromEntries(entries);
}

/** The environment that tells tests and child scripts where the provisioned tools are. */
export function toolVariables(tools) {
  const vars = {};
  if (tools.natsServer) vars.WORKLANE_NATS_SERVER_BIN = tools.natsServer.bin;
  if (tools.helm) vars.HELM_BIN = vars.WORKLANE_HELM_BIN = tools.helm.bin;
  if (tools.chromium) vars.WORKLANE_CHROMIUM_BIN = tools.chromium.bin;
  if (tools.postgres) vars.WORKLANE_POSTGRES_BIN_DIR = tools.postgres.binDir;
  if (tools.schemathesis) vars.WORKLANE_SCHEMATHESIS_BIN = tools.schemathesis.bin;
  if (tools.promtool) vars.WORKLANE_PROMTOOL_BIN = tools.promtool.bin;
  if (tools.buf) vars.WORKLANE_BUF_BIN = tools.buf.bin;
  return vars;
}

export { useProjectNode } from './node.mjs';
