import { render, renderCi } from '../src/helm.mjs';
import { SERVICES, byComponent, ofKind } from '../src/objects.mjs';

const objects = renderCi('all-enabled-values.yaml');
const containerOf = (workload) => workload.spec.template.spec.containers[0];
const migrationJob = (rendered, name) => ofKind(rendered, 'Job').find((job) => job.metadata.labels['worklane.dev/service'] === name);

describe('extraEnvFrom, extraVolumes and extraVolumeMounts', () => {
  const deployment = byComponent(objects, 'Deployment', 'project');
  const container = containerOf(deployment);

  test("are added to the service's container and pod, before the chart's own variables so that those win", () => {
    expect(container.envFrom).toEqual([
      { configMapRef: { name: 'worklane-project-extra' } },
      { secretRef: { name: 'worklane-project-extra', optional: true } },
      { configMapRef: { name: 'worklane-project' } },
    ]);
    expect(container.volumeMounts).toEqual([
      { name: 'tmp', mountPath: '/tmp' },
      { name: 'postgres-ca', mountPath: '/etc/worklane/postgres-ca', readOnly: true },
    ]);
    expect(deployment.spec.template.spec.volumes).toContainEqual({ name: 'postgres-ca', configMap: { name: 'worklane-postgres-ca' } });
  });

  test("reach the service's migration Job too, which talks to the same database", () => {
    const job = migrationJob(objects, 'project');
    const migrate = containerOf(job);
    expect(migrate.envFrom).toEqual(deployment.spec.template.spec.containers[0].envFrom.slice(0, 2));
    expect(migrate.volumeMounts).toContainEqual({ name: 'postgres-ca', mountPath: '/etc/worklane/postgres-ca', readOnly: true });
    expect(job.spec.template.spec.volumes).toContainEqual({ name: 'postgres-ca', configMap: { name: 'worklane-postgres-ca' } });
    const token = containerOf(migrationJob(objects, 'token'));
    expect(token.env.map((e) => e.name)).toContain('TOKEN_PEPPER');
  });

  test('leave the other services as they were', () => {
    for (const name of SERVICES.filter((s) => s !== 'project')) {
      const other = byComponent(objects, 'Deployment', name);
      expect(containerOf(other).envFrom).toHaveLength(1);
      expect(containerOf(other).volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);
      expect(other.spec.template.spec.volumes.map((v) => v.name)).toEqual(['tmp']);
    }
  });

  test('are checked by the schema: a volume needs a name, a mount a path', () => {
    const rendered = render({
      valuesFile: 'minimal-values.yaml',
      set: [
        'issue.extraVolumes[0].name=certs',
        'issue.extraVolumes[0].emptyDir.medium=Memory',
        'issue.extraVolumeMounts[0].name=certs',
        'issue.extraVolumeMounts[0].mountPath=/certs',
      ],
    });
    expect(containerOf(byComponent(rendered, 'Deployment', 'issue')).volumeMounts).toContainEqual({ name: 'certs', mountPath: '/certs' });
  });
});
