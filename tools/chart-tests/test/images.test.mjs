import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { SERVICES } from '../src/objects.mjs';
import { repoRoot } from '../src/paths.mjs';
import { serviceTable } from '../src/service-table.mjs';

const read = (file) => readFileSync(path.join(repoRoot, file), 'utf8');
const serviceDirs = readdirSync(path.join(repoRoot, 'services'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(path.join(repoRoot, 'services', entry.name, 'package.json')))
  .map((entry) => entry.name)
  .sort();
const dockerfile = read('tools/images/Dockerfile');
const bake = read('docker-bake.hcl');
const table = serviceTable();

/** The Dockerfile's stages: { name, body } in order. */
const stages = dockerfile
  .split(/^(?=FROM )/m)
  .filter((part) => part.startsWith('FROM '))
  .map((body) => ({ name: body.match(/^FROM \S+ AS (\S+)$/m)?.[1], body }));
const stage = (name) => stages.find((s) => s.name === name).body;

test('the service table, the chart, the bake file and the services folder name the same services', () => {
  const names = table.map((entry) => entry.name);
  expect([...names].sort()).toEqual(serviceDirs);
  expect([...SERVICES].sort()).toEqual(serviceDirs);
  // The chart's catalog is generated from the table (packages/testing checks that it is current).
  const catalog = read('charts/worklane/templates/lib/_catalog.tpl');
  for (const name of names) expect(catalog).toMatch(new RegExp(`^${name}:$`, 'm'));
  expect(catalog).toContain(`[${names.join(', ')}]`);
  const matrix = bake.match(/matrix\s*=\s*\{\s*svc\s*=\s*\[([^\]]*)\]/);
  expect(JSON.parse(`[${matrix[1]}]`)).toEqual(names);
  // The bake file tags each service with its name, which is the table's image name.
  for (const entry of table) expect(entry.image).toBe(entry.name);
  expect(bake).toContain('tags       = ["${REGISTRY}/${svc}:${TAG}"]');
});

test('one Dockerfile builds every service, the service being its SERVICE build argument', () => {
  expect(bake).toMatch(/dockerfile = "tools\/images\/Dockerfile"/);
  expect(bake).toMatch(/args\s+= \{ SERVICE = svc \}/);
  expect(serviceDirs.filter((name) => existsSync(path.join(repoRoot, 'services', name, 'Dockerfile')))).toEqual([]);
  expect(existsSync(path.join(repoRoot, 'tools/images/Dockerfile.template'))).toBe(false);
  // Every stage that uses the argument declares it (a build argument is scoped to its stage).
  for (const { name, body } of stages) {
    if (body.includes('${SERVICE}')) expect({ name, declares: /^ARG SERVICE$/m.test(body) }).toEqual({ name, declares: true });
  }
  // The prune names the service's package, which the table says is @worklane/<name>.
  expect(stage('prune')).toContain('turbo prune "@worklane/${SERVICE}" @worklane/cli --docker');
  for (const entry of table) expect(entry.package).toBe(`@worklane/${entry.name}`);
  expect(stage('prune')).toMatch(/--build-arg SERVICE=<name>/);
});

test.each(serviceDirs)('the image of %s runs the command `npm start` runs, in its folder, under tini, as a numeric non-root user', (name) => {
  const pkg = JSON.parse(read(`services/${name}/package.json`));
  // npm start runs `node dist/main.js` in services/<name>; the image does the same in /app/services/<name>.
  expect(pkg.scripts.start).toBe('node dist/main.js');
  const runtime = stage('runtime');
  const workdirs = [...runtime.matchAll(/^WORKDIR (.*)$/gm)].map((m) => m[1]);
  expect(workdirs.at(-1).replace('${SERVICE}', name)).toBe(`/app/services/${name}`);
  expect(JSON.parse(runtime.match(/^CMD (.*)$/m)[1])).toEqual(pkg.scripts.start.split(' '));
  expect(existsSync(path.join(repoRoot, 'services', name, 'src/main.ts'))).toBe(true);
  expect(JSON.parse(runtime.match(/^ENTRYPOINT (.*)$/m)[1])).toEqual(['/usr/bin/tini', '--']);
  const users = [...dockerfile.matchAll(/^USER (.*)$/gm)].map((m) => m[1]);
  expect(users.at(-1)).toMatch(/^[1-9][0-9]*:[1-9][0-9]*$/);
});

test('is multi-stage: turbo prune, npm ci, build, production dependencies only, on Node 24', () => {
  expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24-slim$/m);
  expect(dockerfile).toMatch(/npm ci --ignore-scripts/);
  expect(dockerfile).toMatch(/npm ci --omit=dev/);
  expect(stage('build')).toContain('turbo run build "--filter=@worklane/${SERVICE}..."');
  expect(stages.map((s) => s.name)).toEqual(['prune', 'build', 'deps', 'runtime']);
  // The runtime stage copies production node_modules and built files only.
  expect([...stage('runtime').matchAll(/^COPY --from=(\S+)/gm)].map((m) => m[1])).toEqual(['deps', 'build']);
  expect(stage('runtime')).toContain('COPY --from=build /release/ ./');
});

test('the images prune with the turbo version package-lock.json pins', () => {
  const locked = JSON.parse(read('package-lock.json')).packages['node_modules/turbo'].version;
  expect(dockerfile).toMatch(new RegExp(`^ARG TURBO_VERSION=${locked.replaceAll('.', '\\.')}$`, 'm'));
});

test('.dockerignore keeps dependencies, build output, git and operations files out of the context', () => {
  const ignored = read('.dockerignore')
    .split('\n')
    .map((line) => line.trim());
  expect(ignored).toEqual(expect.arrayContaining(['.git', '**/node_modules', '**/dist', 'charts', 'deploy', '.cache']));
});

test('the migration Job command exists in the CLI the images carry, at the image path the chart runs', () => {
  const cli = JSON.parse(read('tools/worklane/package.json'));
  expect(cli.name).toBe('@worklane/cli');
  expect(cli.bin.worklane).toBe('bin/worklane.mjs');
  expect(read('charts/worklane/templates/lib/_migration.tpl')).toContain('- /app/tools/worklane/bin/worklane.mjs');
  // The build stage copies tools/ (the pruned CLI) into the release that lands in /app.
  expect(stage('build')).toMatch(/for dir in packages proto services tools/);
});
