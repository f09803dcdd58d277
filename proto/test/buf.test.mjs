// The gRPC contracts between the services, checked with buf: the protos lint clean under
// proto/buf.yaml, nothing breaks what the last release's services send and expect (the newest
// image in proto/releases), and the checks catch the changes they are there to catch, made on a
// copy of the protos. `npm test` provisions buf (WORKLANE_BUF_BIN); run alone, the suite finds or
// builds it through the same provisioning path.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';

import { findBuf, isReleased, protoRoot, releaseImages, runBuf } from '../scripts/buf.mjs';

let buf;
let lastRelease;
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'worklane-buf-'));

beforeAll(async () => {
  buf = await findBuf();
  lastRelease = releaseImages().at(-1);
}, 600_000);

afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** Explains a failed buf run in the assertion message. */
const ran = (result) => `exit ${result.status}\n${result.stdout}${result.stderr}`;

/** The rule ids of buf's findings (--error-format json: one object a line). */
function findings(result) {
  return result.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
}

/** A copy of the protos and buf.yaml with `edits` applied ({file: [from, to] pairs}); returns its directory. */
function copyWith(name, edits = {}) {
  const dir = path.join(scratch, name);
  fs.cpSync(path.join(protoRoot, 'worklane'), path.join(dir, 'worklane'), { recursive: true });
  fs.copyFileSync(path.join(protoRoot, 'buf.yaml'), path.join(dir, 'buf.yaml'));
  for (const [file, replacements] of Object.entries(edits)) {
    const target = path.join(dir, file);
    let text = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : '';
    for (const [from, to] of replacements) {
      if (from === null) {
        text = to;
        continue;
      }
      if (!text.includes(from)) throw new Error(`${file} has no ${JSON.stringify(from)}: update this test`);
      text = text.replace(from, to);
    }
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, text);
  }
  return dir;
}

const breaking = (dir) => runBuf(buf, ['breaking', '--against', lastRelease, '--error-format', 'json'], dir);
const lint = (dir, extra = []) => runBuf(buf, ['lint', '--error-format', 'json', ...extra], dir);

const TOKEN = 'worklane/token/v1/token.proto';
const PROJECT = 'worklane/project/v1/project.proto';
const WEBHOOK = 'worklane/webhook/v1/webhook.proto';

/**
 * What buf.yaml's exceptions excuse, one finding at a time: the released v1 services keep their
 * names and their RPCs their request and response types. Anything new in those files is held to
 * the STANDARD rules all the same: it shows up here as an extra finding.
 */
const response = (file, rpc, type) => ({ file, rule: 'RPC_RESPONSE_STANDARD_NAME', starts: `RPC response type "${type}" should be named "${rpc}Response"` });
const shared = (type) => ({ file: TOKEN, rule: 'RPC_REQUEST_RESPONSE_UNIQUE', starts: `"worklane.token.v1.${type}" is used as the request or response type for multiple RPCs` });
const WAIVED = [
  { file: PROJECT, rule: 'SERVICE_SUFFIX', starts: 'Service name "ProjectDirectory"' },
  response(PROJECT, 'CreateOrganization', 'Organization'),
  response(PROJECT, 'GetProject', 'Project'),
  response(TOKEN, 'Authenticate', 'Identity'),
  response(TOKEN, 'CreateUser', 'User'),
  response(TOKEN, 'GetUserByEmail', 'User'),
  response(TOKEN, 'CreateTeam', 'Team'),
  response(TOKEN, 'AddMember', 'Membership'),
  response(TOKEN, 'VerifyPassword', 'User'),
  response(TOKEN, 'CreateSession', 'Session'),
  response(TOKEN, 'GetSession', 'Session'),
  shared('User'), // CreateUser, GetUserByEmail, VerifyPassword
  shared('User'),
  shared('User'),
  shared('Session'), // CreateSession, GetSession
  shared('Session'),
  { file: WEBHOOK, rule: 'SERVICE_SUFFIX', starts: 'Service name "WebhookDirectory"' },
  response(WEBHOOK, 'GetWebhook', 'Subscription'),
];

/** The STANDARD findings in dir with no exception at all, against WAIVED: {missing, extra}. */
function unexpectedWaivers(dir) {
  const strict = JSON.stringify({ version: 'v2', modules: [{ path: '.', excludes: ['node_modules', 'dist', 'src'] }], lint: { use: ['STANDARD'] } });
  const extra = [];
  const missing = [...WAIVED];
  for (const f of findings(lint(dir, ['--config', strict]))) {
    const at = missing.findIndex((w) => w.file === f.path && w.rule === f.type && f.message.startsWith(w.starts));
    if (at >= 0) missing.splice(at, 1);
    else extra.push(`${f.path}:${f.start_line} ${f.type} ${f.message}`);
  }
  return { missing, extra };
}

describe('the protos in the repository', () => {
  test('lint clean under proto/buf.yaml', () => {
    const result = lint(protoRoot);
    expect({ status: result.status, findings: findings(result) }).toEqual({ status: 0, findings: [] });
  });

  test('break nothing of the last release', () => {
    expect(lastRelease).toBeDefined();
    const result = breaking(protoRoot);
    expect(result.status === 0 ? '' : ran(result)).toBe('');
  });

  test('waive exactly the released v1 names that buf.yaml excuses, so a new RPC is held to the rules', () => {
    expect(unexpectedWaivers(protoRoot)).toEqual({ missing: [], extra: [] });
  });

  test('a version is released once CHANGELOG.md has its section: from then on its image is final', () => {
    const changelog = '# Changelog\n\n## [Unreleased]\n\n## [0.2.0] - 2027-01-10\n\n- 0.1.0 had a bug\n\n## [0.1.0] - 2026-12-01\n';
    expect(isReleased('0.2.0', changelog)).toBe(true);
    expect(isReleased('0.1.0', changelog)).toBe(true);
    expect(isReleased('0.3.0', changelog)).toBe(false);
    expect(isReleased('0.1.0', '# Changelog\n\n## [Unreleased]\n\n- 0.1.0 will bring...\n')).toBe(false);
    expect(isReleased('0.1.0', '## [0x1y0] - 2026-12-01\n')).toBe(false);
  });

  test('the last release is the newest image, versions compared as numbers', () => {
    const dir = path.join(scratch, 'releases');
    fs.mkdirSync(dir);
    for (const file of ['0.9.0.json', '0.10.0.json', '0.2.1.json', 'README.md']) fs.writeFileSync(path.join(dir, file), '{}');
    expect(releaseImages(dir).map((f) => path.basename(f))).toEqual(['0.2.1.json', '0.9.0.json', '0.10.0.json']);
  });
});

describe('buf breaking against the last release', () => {
  const wireBreaks = [
    ['a field renumbered', { [TOKEN]: [['string name = 4;\n  string created_at = 5;', 'string name = 7;\n  string created_at = 5;']] }, 'FIELD_NO_DELETE_UNLESS_NUMBER_RESERVED'],
    ['a field given another type', { [TOKEN]: [['int64 token_id = 1;', 'string token_id = 1;']] }, 'FIELD_WIRE_JSON_COMPATIBLE_TYPE'],
    ['a field renamed', { [TOKEN]: [['string last_used_at = 6;', 'string last_seen_at = 6;']] }, 'FIELD_SAME_NAME'],
    ['a field made repeated', { [TOKEN]: [['string csrf_token = 3;', 'repeated string csrf_token = 3;']] }, 'FIELD_WIRE_JSON_COMPATIBLE_CARDINALITY'],
    ['a field deleted without reserving it', { [TOKEN]: [['  string last_used_at = 6;\n', '']] }, 'FIELD_NO_DELETE_UNLESS_NUMBER_RESERVED'],
    ['a field deleted with only its number reserved', { [TOKEN]: [['  string last_used_at = 6;\n', '  reserved 6;\n']] }, 'FIELD_NO_DELETE_UNLESS_NAME_RESERVED'],
    ['an RPC deleted', { [PROJECT]: [['  rpc ListOrganizations(ListOrganizationsRequest) returns (ListOrganizationsResponse);\n', '']] }, 'RPC_NO_DELETE'],
    ['a service renamed (its method paths change)', { [PROJECT]: [['service ProjectDirectory {', 'service ProjectDirectoryService {']] }, 'PACKAGE_SERVICE_NO_DELETE'],
    ['an RPC given another response type', { [PROJECT]: [['returns (Project);', 'returns (Organization);']] }, 'RPC_SAME_RESPONSE_TYPE'],
    ['a package renamed', { [PROJECT]: [['package worklane.project.v1;', 'package worklane.projects.v1;']] }, 'PACKAGE_NO_DELETE'],
  ];

  test.each(wireBreaks)('fails on %s', (name, edits, rule) => {
    const result = breaking(copyWith(name.replace(/\W+/g, '-'), edits));
    expect(result.status).not.toBe(0);
    expect(findings(result).map((f) => f.type)).toContain(rule);
  });

  const compatible = [
    ['a field retired with its number and name reserved', { [TOKEN]: [['  string last_used_at = 6;\n', '  reserved 6;\n  reserved "last_used_at";\n']] }],
    ['a field added', { [TOKEN]: [['string last_used_at = 6;', 'string last_used_at = 6;\n  string expires_at = 7;']] }],
    [
      'an RPC added',
      {
        [PROJECT]: [
          ['  rpc GetProject(', '  rpc ListProjects(ListProjectsRequest) returns (ListProjectsResponse);\n  rpc GetProject('],
          [
            'message GetProjectRequest {',
            'message ListProjectsRequest {\n  int64 team_id = 1;\n}\n\nmessage ListProjectsResponse {\n  repeated Project projects = 1;\n}\n\nmessage GetProjectRequest {',
          ],
        ],
      },
    ],
    ['a field deprecated', { [TOKEN]: [['string last_used_at = 6;', 'string last_used_at = 6 [deprecated = true];']] }],
  ];

  test.each(compatible)('passes %s', (name, edits) => {
    const dir = copyWith(name.replace(/\W+/g, '-'), edits);
    const result = breaking(dir);
    expect(result.status === 0 ? '' : ran(result)).toBe('');
    const linted = lint(dir);
    expect(linted.status === 0 ? '' : ran(linted)).toBe('');
  });
});

describe('buf lint', () => {
  test('holds a new RPC in a released file to the naming rules the released ones are excused from', () => {
    const dir = copyWith('new-rpc', {
      [PROJECT]: [['  rpc GetProject(', '  rpc RenameProject(GetProjectRequest) returns (Project);\n  rpc GetProject(']],
    });
    const { missing, extra } = unexpectedWaivers(dir);
    expect(missing).toEqual([]);
    expect(extra).toContain(
      `${PROJECT}:10 RPC_RESPONSE_STANDARD_NAME RPC response type "Project" should be named "RenameProjectResponse" or "ProjectDirectoryRenameProjectResponse".`,
    );
  });

  test('holds a new package to the whole STANDARD set', () => {
    const dir = copyWith('new-package', {
      'worklane/project/v2/project.proto': [
        [
          null,
          'syntax = "proto3";\n\npackage worklane.project.v2;\n\nservice ProjectDirectory {\n  rpc GetProject(GetProjectRequest) returns (Project);\n}\n\n' +
            'message Project {\n  int64 id = 1;\n}\n\nmessage GetProjectRequest {\n  int64 id = 1;\n}\n',
        ],
      ],
    });
    const result = lint(dir);
    expect(result.status).not.toBe(0);
    const rules = findings(result).map((f) => `${f.path} ${f.type}`);
    expect(rules).toEqual(expect.arrayContaining(['worklane/project/v2/project.proto SERVICE_SUFFIX', 'worklane/project/v2/project.proto RPC_RESPONSE_STANDARD_NAME']));
  });

  test('refuses buf:lint:ignore comments: every exception is in buf.yaml', () => {
    const dir = copyWith('comment-ignore', {
      'worklane/project/v2/project.proto': [
        [
          null,
          'syntax = "proto3";\n\npackage worklane.project.v2;\n\n// buf:lint:ignore SERVICE_SUFFIX\nservice ProjectDirectory {\n  rpc GetProject(GetProjectRequest) returns (GetProjectResponse);\n}\n\n' +
            'message GetProjectResponse {\n  int64 id = 1;\n}\n\nmessage GetProjectRequest {\n  int64 id = 1;\n}\n',
        ],
      ],
    });
    expect(findings(lint(dir)).map((f) => f.type)).toContain('SERVICE_SUFFIX');
  });
});
