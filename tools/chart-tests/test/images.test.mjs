import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../src/paths.mjs';
import { SERVICES } from '../src/objects.mjs';

const read = (file) => readFileSync(path.join(repoRoot, file), 'utf8');
const serviceDirs = readdirSync(path.join(repoRoot, 'services'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(path.join(repoRoot, 'services', entry.name, 'package.json')))
  .map((entry) => entry.name)
  .sort();

test('the chart, the images and the services folder name the same seven services', () => {
  expect(serviceDirs).toEqual([...SERVICES].sort());
  const catalog = read('charts/worklane/templates/lib/_catalog.tpl');
  for (const name of SERVICES) expect(catalog).toMatch(new RegExp(`^${name}:$`, 'm'));
  const bake = read('docker-bake.hcl');
  const matrix = bake.match(/matrix\s*=\s*\{\s*svc\s*=\s*\[([^\]]*)\]/);
  expect(JSON.parse(`[${matrix[1]}]`).sort()).toEqual([...SERVICES].sort());
});

describe.each(serviceDirs)('services/%s/Dockerfile', (name) => {
  const dockerfile = read(`services/${name}/Dockerfile`);
  const pkg = JSON.parse(read(`services/${name}/package.json`));

  test('is generated from tools/images/Dockerfile.template (run tools/images/generate-dockerfiles.sh)', () => {
    expect(dockerfile).toBe(read('tools/images/Dockerfile.template').replaceAll('__SERVICE__', name));
  });

  test('starts the service with the command `npm start` runs, under tini, as a numeric non-root user', () => {
    // npm start runs `node dist/main.js` in services/<name>; the image runs the same file from /app.
    expect(pkg.scripts.start).toBe('node dist/main.js');
    const cmd = JSON.parse(dockerfile.match(/^CMD (.*)$/m)[1]);
    expect(cmd).toEqual(['node', `services/${name}/${pkg.scripts.start.split(' ')[1]}`]);
    expect(JSON.parse(dockerfile.match(/^ENTRYPOINT (.*)$/m)[1])).toEqual(['/usr/bin/tini', '--']);
    const users = [...dockerfile.matchAll(/^USER (.*)$/gm)].map((m) => m[1]);
    expect(users.at(-1)).toMatch(/^[1-9][0-9]*:[1-9][0-9]*$/);
  });

  test('is multi-stage: turbo prune, npm ci, build, production dependencies only, on Node 24', () => {
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24-slim$/m);
    expect(dockerfile).toContain(`turbo prune @worklane/${name} @worklane/cli --docker`);
    expect(dockerfile).toMatch(/npm ci --ignore-scripts/);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    expect(dockerfile).toContain(`turbo run build --filter=@worklane/${name}...`);
    const stages = [...dockerfile.matchAll(/^FROM \S+ AS (\S+)$/gm)].map((m) => m[1]);
    expect(stages).toEqual(['prune', 'build', 'deps', 'runtime']);
    // The runtime stage copies production node_modules and built files only.
    const runtime = dockerfile.slice(dockerfile.indexOf('AS runtime'));
    expect([...runtime.matchAll(/^COPY --from=(\S+)/gm)].map((m) => m[1])).toEqual(['deps', 'build']);
    expect(runtime).toContain('COPY --from=build /release/ ./');
  });
});

test("the images prune with the turbo version package-lock.json pins", () => {
  const locked = JSON.parse(read('package-lock.json')).packages['node_modules/turbo'].version;
  expect(read('tools/images/Dockerfile.template')).toMatch(new RegExp(`^ARG TURBO_VERSION=${locked.replaceAll('.', '\\.')}$`, 'm'));
});

test('.dockerignore keeps dependencies, build output, git and operations files out of the context', () => {
  const ignored = read('.dockerignore').split('\n').map((line) => line.trim());
  expect(ignored).toEqual(expect.arrayContaining(['.git', '**/node_modules', '**/dist', 'charts', 'deploy', '.cache']));
});

test('the migration Job command exists in the CLI the images carry', () => {
  const cli = JSON.parse(read('tools/worklane/package.json'));
  expect(cli.name).toBe('@worklane/cli');
  expect(cli.bin.worklane).toBe('bin/worklane.mjs');
});
