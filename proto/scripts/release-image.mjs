// Writes the image of the protos as released: `npm run release-image -w @worklane/proto -- 1.4.0`
// writes proto/releases/1.4.0.json, which `buf breaking` in the proto tests checks every later
// change against (the newest image in proto/releases is the last release). Run it when a release
// is cut, once CHANGELOG.md has the release's section, and commit the file with the release.
// The image of a released version (one with its CHANGELOG.md section) is never replaced; the
// image of the version being prepared is refreshed.
//
// The image is buf's JSON form without source locations, indented, so that the difference between
// two releases' contracts reads as a diff.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { bufEnv, findBuf, isReleased, protoRoot, releasesDir } from './buf.mjs';

const version = process.argv[2];
if (!/^\d+\.\d+\.\d+$/.test(version ?? '')) {
  process.stderr.write('usage: npm run release-image -w @worklane/proto -- MAJOR.MINOR.PATCH\n');
  process.exit(2);
}
const file = join(releasesDir, `${version}.json`);
const changelog = readFileSync(join(protoRoot, '..', 'CHANGELOG.md'), 'utf8');
if (existsSync(file) && isReleased(version, changelog)) {
  process.stderr.write(`${file} exists and ${version} is released (CHANGELOG.md): a released contract is never rewritten\n`);
  process.exit(1);
}

const buf = await findBuf();
const image = execFileSync(buf, ['build', '--exclude-source-info', '-o', '-#format=json'], {
  cwd: protoRoot,
  env: bufEnv(),
  encoding: 'utf8',
  maxBuffer: 64 * 1024 * 1024,
});
mkdirSync(dirname(file), { recursive: true });
writeFileSync(file, `${JSON.stringify(JSON.parse(image), null, 2)}\n`);
process.stdout.write(`wrote ${file}${isReleased(version, changelog) ? '' : ` (${version} is not released yet: this image is refreshed until it is)`}\n`);
