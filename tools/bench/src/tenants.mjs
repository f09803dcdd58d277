// Many teams, each with a project and webhooks, made quickly for a benchmark, through the
// product's own paths: teams, organizations and API tokens through the token and project
// services' gRPC APIs with the operator CLI's clients (what `worklane bootstrap` does, in this
// process instead of one CLI process per team), projects and webhooks through the public API
// behind the gateway, so every one is validated as a client's would be.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';

import { inTurn } from './stats.mjs';

const require = createRequire(import.meta.url);

/**
 * The operator's clients for `system` and one user who will own every team; call `close()` when
 * done. Loads the CLI's compiled modules (built with the benchmarks' BENCH_BUILD_FILTERS).
 */
export async function teamMaker(system, { email = `bench-owner-${randomBytes(4).toString('hex')}@example.test` } = {}) {
  const { Clients } = require('@worklane/cli/dist/clients.js');
  const { loadCliConfig } = require('@worklane/cli/dist/config.js');
  const { cliEnv } = require('@worklane/testing');
  // The second argument keeps a running `npm start` on this machine out of it.
  const clients = new Clients(loadCliConfig(cliEnv(system), {}));
  const user = await clients.createUser({ email, password: randomBytes(18).toString('base64url'), name: 'Bench owner' });
  return {
    /** A new team owned by the user, with an organization and an API token of its own. */
    async team(name) {
      const team = await clients.createTeam({ name, owner_user_id: user.id });
      const organization = await clients.createOrganization({ team_id: team.id, name });
      const created = await clients.createToken({ team_id: team.id, user_id: user.id, name: `${name} token` });
      return { team_id: Number(team.id), organization_id: Number(organization.id), token: created.value };
    },
    close: () => clients.close(),
  };
}

function created(response, what) {
  if (response.status !== 201) throw new Error(`${what}: ${response.status} ${response.text.slice(0, 300)}`);
  return response.body;
}

/**
 * A team ready for load: `maker.team(name)`, then one project through the API. Resolves to
 * { team_id, organization_id, token, project_id, issuesUrl, client } (client: the API as the team).
 */
export async function teamWithProject(system, maker, name) {
  const { api } = require('@worklane/testing');
  const team = await maker.team(name);
  const client = api(system, team.token);
  const project = created(await client.post(`/teams/${team.team_id}/organizations/${team.organization_id}/projects`, { name }), `${name}: project`);
  return {
    ...team,
    project_id: project.id,
    client,
    issuesUrl: `${system.gatewayUrl}/api/v1/teams/${team.team_id}/organizations/${team.organization_id}/projects/${project.id}/issues`,
  };
}

/** Subscribes `team` (from teamWithProject) to issue events at each of `urls`, `parallel` at a time; resolves to the webhook ids. */
export async function addWebhooks(team, urls, { parallel = 4, secretPrefix = 'bench-curve-secret' } = {}) {
  return inTurn(urls, parallel, async (url, i) => {
    const webhook = created(
      await team.client.post(`/teams/${team.team_id}/webhooks`, { url, events: ['issue.created', 'issue.updated'], secret: `${secretPrefix}-${team.team_id}-${i}` }),
      `team ${team.team_id}: webhook ${url}`,
    );
    return webhook.id;
  });
}
