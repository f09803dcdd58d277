// Phase (i): the chart's alerts and recording rules under promtool. The rules are rendered from
// ci/all-enabled-values.yaml (every alert on, with alertLabels); `promtool check rules` checks
// them whole (expressions, label and annotation templates), then each scenario of
// alert-scenarios.mjs is one `promtool test rules` file: its alert fires with exactly the
// expected labels and runbook link, and every other alert stays silent. An alert or recording
// rule without a scenario fails, so a new alert cannot go untested.
import fs from 'node:fs';
import path from 'node:path';
import { parseDocument, stringify } from 'yaml';

import { run } from '../../dev/src/util.mjs';
import { RECORDING_SCENARIOS, SCENARIOS } from './alert-scenarios.mjs';
import { chartDir, helm, parseObjects } from './chart-validation.mjs';

const NAMESPACE = 'worklane';
const VALUES = path.join(chartDir, 'ci/all-enabled-values.yaml');

async function renderRules(helmBin) {
  const args = ['template', 'ci', chartDir, '--namespace', NAMESPACE, '--values', VALUES, '--kube-version', '1.32.4'];
  for (const kind of ['ServiceMonitor', 'PrometheusRule']) args.push('--api-versions', `monitoring.coreos.com/v1/${kind}`);
  const { code, stdout, stderr } = await helm(helmBin, args);
  if (code !== 0) throw new Error(`helm template failed:\n${stderr}`);
  const objects = parseObjects(stdout);
  const rule = objects.find((o) => o.kind === 'PrometheusRule');
  if (!rule) throw new Error('ci/all-enabled-values.yaml rendered no PrometheusRule');
  // The scrape jobs are the ServiceMonitors' Services, by component.
  const jobs = Object.fromEntries(objects.filter((o) => o.kind === 'ServiceMonitor').map((o) => [o.metadata.labels['app.kubernetes.io/component'], o.metadata.name]));
  return { groups: rule.spec.groups, jobs };
}

async function promtool(promtoolBin, args, cwd) {
  const { code, stdout, stderr } = await run(promtoolBin, args, { cwd });
  if (code !== 0) throw new Error(`promtool ${args.join(' ')} failed:\n${`${stdout}\n${stderr}`.trim()}`);
}

/** One promtool test file: `case` of the named alert's scenario, every alert evaluated. */
function testFile({ alert, kase, expected, alerts, runbooks }) {
  return {
    rule_files: ['rules-under-test.yaml'],
    evaluation_interval: '1m',
    tests: [
      {
        name: `${alert} ${kase}`,
        interval: '1m',
        input_series: expected.series,
        alert_rule_test: alerts.map((name) => ({
          eval_time: expected.evalTime,
          alertname: name,
          exp_alerts: name === alert && kase === 'fires' ? [{ exp_labels: expected.labels, exp_annotations: { runbook_url: runbooks[name] } }] : [],
        })),
      },
    ],
  };
}

export async function testAlertRules(suite, { helmBin, promtoolBin, workDir }) {
  const dir = path.join(workDir, 'promtool');
  fs.mkdirSync(dir, { recursive: true });
  const { groups, jobs } = await renderRules(helmBin);
  fs.writeFileSync(path.join(dir, 'rules.yaml'), stringify({ groups }));
  await suite.check('promtool check rules: the rendered rules, expressions and templates are valid', () => promtool(promtoolBin, ['check', 'rules', 'rules.yaml'], dir));

  // Summaries and descriptions are free text checked by `check rules` above; the tests compare the
  // labels and the runbook link, which routing and the on-call rely on.
  const underTest = groups.map((group) => ({
    ...group,
    rules: group.rules.map((rule) => (rule.alert ? { ...rule, annotations: { runbook_url: rule.annotations?.runbook_url } } : rule)),
  }));
  fs.writeFileSync(path.join(dir, 'rules-under-test.yaml'), stringify({ groups: underTest }));

  const rules = groups.flatMap((group) => group.rules);
  const alerts = rules.filter((rule) => rule.alert).map((rule) => rule.alert);
  const runbooks = Object.fromEntries(rules.filter((rule) => rule.alert).map((rule) => [rule.alert, rule.annotations?.runbook_url]));
  const values = parseDocument(fs.readFileSync(path.join(chartDir, 'values.yaml'), 'utf8')).toJS();
  const ctx = { ns: NAMESPACE, jobs, limits: values.metrics.prometheusRule };

  for (const rule of rules.filter((r) => r.record)) {
    await suite.check(`recording rule ${rule.record} has a promtool scenario`, () => {
      if (!RECORDING_SCENARIOS[rule.record]) throw new Error('add one to tools/kubernetes/src/alert-scenarios.mjs');
    });
  }
  for (const name of Object.keys(SCENARIOS).filter((n) => !alerts.includes(n))) {
    await suite.check(`scenario ${name} belongs to an alert`, () => {
      throw new Error('the chart has no such alert any more: remove or rename the scenario');
    });
  }
  for (const rule of rules.filter((r) => r.alert)) {
    const scenario = SCENARIOS[rule.alert];
    if (!scenario) {
      await suite.check(`${rule.alert} has a promtool scenario`, () => {
        throw new Error('add one to tools/kubernetes/src/alert-scenarios.mjs');
      });
      continue;
    }
    const cases = scenario(ctx);
    for (const kase of ['fires', 'silent']) {
      await suite.check(`promtool: ${rule.alert} ${kase === 'fires' ? 'fires in its scenario, every other alert silent' : 'stays silent in the near miss'}`, async () => {
        const expected = { ...cases[kase], labels: { ...rule.labels, ...(cases[kase].labels ?? {}) } };
        const file = `${rule.alert}-${kase}.test.yaml`;
        fs.writeFileSync(path.join(dir, file), stringify(testFile({ alert: rule.alert, kase, expected, alerts, runbooks })));
        await promtool(promtoolBin, ['test', 'rules', file], dir);
      });
    }
  }
}
