// The external tools Worklane's scripts run, the version each is pinned to when the scripts
// provision it, and the oldest version accepted when one is already installed. One table: the
// README's "Requirements" section states the same minimums, and tools/dev/test checks it does.

export const TOOLS = {
  /** The Node major that the images run (tools/images/Dockerfile: node:24-slim). */
  node: { pinned: '24.21.0', major: 24 },
  /** nats-server: the delivery consumer's filter_subjects needs 2.10. */
  natsServer: {
    pinned: '2.11.9',
    minimum: '2.10.0',
    module: 'github.com/nats-io/nats-server/v2',
    source: 'go install from the Go module proxy',
  },
  /** helm: the chart tests render charts/worklane (apiVersion v2, values.schema.json draft 7). */
  helm: { pinned: '3.19.0', minimum: '3.14.0', module: 'helm.sh/helm/v3/cmd/helm', source: 'go install from the Go module proxy' },
  /** PostgreSQL server binaries (initdb, pg_ctl, postgres): Debian 12's 15 and newer. */
  postgres: { minimum: '15.0', aptPackage: 'postgresql' },
  /** Chromium for the console's browser tests, driven by playwright-core. */
  chromium: { minimum: '120.0', aptPackage: 'chromium' },
  /** kube-apiserver and kubectl for `npm run test:kubernetes`, and the test cluster's kubelet, kube-controller-manager, kube-scheduler and kube-proxy, built from the Go module proxy (provision/kubernetes.mjs). */
  kubernetes: { pinned: '1.32.4', module: 'k8s.io/kubernetes', source: 'go build of a wrapper module from the Go module proxy' },
  /** etcd, the store of that API server: Debian 12's etcd-server is 3.4. */
  etcd: { minimum: '3.4.0', aptPackage: 'etcd-server' },
  /** buildah builds the service images for the test cluster; mmdebstrap makes their Node base image. */
  buildah: { minimum: '1.28.0', aptPackages: ['buildah', 'mmdebstrap'] },
  /** The test cluster's node: containerd (with runc, not crun, which refuses cgroup v1 hybrid), the CNI plugins, iptables, conntrack. */
  containerd: { minimum: '1.6.0', aptPackages: ['containerd', 'runc', 'containernetworking-plugins', 'iptables', 'conntrack'] },
  /**
   * kube-router, the test cluster's network-policy controller (its firewall alone, next to the
   * bridge CNI), built from the Go module proxy (provision/kube-router.mjs): 2.1.0 is the release
   * the proxy serves here (it refuses the module's version list and later releases). The checksum
   * database has no entry for the module: `sums` are its pinned hashes, checked by go.
   */
  kubeRouter: {
    pinned: '2.1.0',
    module: 'github.com/cloudnativelabs/kube-router/v2',
    sums: { module: 'h1:xWsptKtmZ44L+NjwFKoFAFlVdxCz8fka9A/eYJe95Ok=', goMod: 'h1:JU/k2Qqcph0myF1cRDLidz1SZdoSrPczuYcGxYRSP0A=' },
    aptPackages: ['ipset', 'iptables'],
  },
  /** The Dockerfile's node:24-slim, made locally: Debian by mmdebstrap, Node at node.pinned, npm at package.json's packageManager, corepack. */
  nodeBaseImage: { suite: 'bookworm', mirror: 'http://deb.debian.org/debian', securityMirror: 'http://deb.debian.org/debian-security', corepack: '0.36.0' },
  /** CoreDNS, the test cluster's DNS: a small main of its own plugins (no forward: nothing outside resolves), from the Go module proxy. */
  coredns: { pinned: '1.12.1', module: 'github.com/coredns/coredns' },
  /**
   * The OpenTelemetry Collector of the test cluster's trace phase: a distribution made by the
   * collector's builder (provision/otel-collector.mjs). `pinned` is the collector's 0.x release,
   * `stable` the 1.x version its stable modules (confmap providers) carry in the same release.
   */
  otelCollector: { pinned: '0.165.0', stable: '1.71.0', builderModule: 'go.opentelemetry.io/collector/cmd/builder' },
  /** promtool: `promtool test rules` on the chart's alerts. Prometheus 3.x's Go module is versioned v0.3xx (3.16.0 is v0.316.0). */
  promtool: {
    pinned: '3.16.0',
    minimum: '3.0.0',
    module: 'github.com/prometheus/prometheus/cmd/promtool',
    source: 'go install from the Go module proxy',
  },
  /**
   * buf lints the gRPC protos and checks them for wire-breaking changes against the last release's
   * image (proto/releases): exactly this version (its findings are compared one by one). Its
   * go.mod asks for Go 1.26.7.
   */
  buf: { pinned: '1.75.0', minimum: '1.75.0', exact: true, module: 'github.com/bufbuild/buf/cmd/buf', source: 'go install from the Go module proxy' },
  /** schemathesis fuzzes the API against its OpenAPI document (tools/contract-tests), in a virtualenv of its own. */
  schemathesis: { pinned: '4.32.5', minimum: '4.32.0', source: 'pip install from PyPI into ~/.cache/worklane/schemathesis/<version>' },
  /** Python with venv, for that virtualenv: schemathesis 4 needs 3.9. */
  python: { minimum: '3.9.0', aptPackages: ['python3', 'python3-venv'] },
  /** Go builds nats-server and helm; an older go fetches the toolchain their go.mod asks for. */
  go: { minimum: '1.21.0' },
};
