import { html } from '../html';
import type { Issue, Organization, Project } from '../resources';
import { label, timestamp } from './format';
import { page, type PageContext } from './layout';

export interface OverviewData {
  organizations: { organization: Organization; projects: Project[] }[];
  /** Undefined when the issue service could not be asked. */
  recentIssues: { issue: Issue; project: Project }[] | undefined;
  apiBase: string;
}

function projectsTable(projects: Project[]) {
  if (projects.length === 0) return html`<p class="empty">No projects in this organization yet.</p>`;
  return html`<table>
    <thead><tr><th scope="col">Project</th><th scope="col">Slug</th><th scope="col">Repository</th><th scope="col">Created</th></tr></thead>
    <tbody>
      ${projects.map(
        (project) => html`<tr>
          <th scope="row">${project.name}${project.description ? html`<span class="sub">${project.description}</span>` : ''}</th>
          <td><code>${project.slug}</code></td>
          <td>${project.github_repository ?? html`<span class="muted">—</span>`}</td>
          <td>${timestamp(project.created_at)}</td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}

function issuesSection(data: OverviewData) {
  if (data.recentIssues === undefined) {
    return html`<p class="notice error" role="status">Recent issues could not be loaded just now. Reload the page to try again.</p>`;
  }
  if (data.recentIssues.length === 0) return html`<p class="empty">No issues yet.</p>`;
  return html`<table>
    <thead><tr><th scope="col">Issue</th><th scope="col">Title</th><th scope="col">Project</th><th scope="col">Status</th><th scope="col">Priority</th><th scope="col">Created</th></tr></thead>
    <tbody>
      ${data.recentIssues.map(
        ({ issue, project }) => html`<tr>
          <th scope="row"><code>${issue.reference_code}</code></th>
          <td>${issue.title}</td>
          <td>${project.name}</td>
          <td><span class="badge status-${issue.status}">${label(issue.status)}</span></td>
          <td>${label(issue.priority)}</td>
          <td>${timestamp(issue.created_at)}</td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}

export function overviewPage(context: PageContext, data: OverviewData) {
  const team = context.team!;
  const empty = data.organizations.length === 0;
  return page(context, {
    title: `${team.team_name} overview`,
    body: html`<h1>${team.team_name}</h1>
      <section aria-labelledby="organizations-heading">
        <h2 id="organizations-heading">Organizations and projects</h2>
        ${
          empty
            ? html`<div class="empty">
              <p>This team has no organizations yet. Create one with the API, using a token from <a href="/teams/${team.team_id}/settings/tokens">API tokens</a>:</p>
              <pre class="code"><code>curl -X POST ${data.apiBase}/api/v1/teams/${team.team_id}/organizations \\
  -H "Authorization: Bearer $WORKLANE_TOKEN" \\
  -H "Accept: application/json" -H "Content-Type: application/json" \\
  -d '{"name": "Acme"}'</code></pre>
            </div>`
            : data.organizations.map(
                ({ organization, projects }) => html`<section class="card" aria-labelledby="organization-${organization.id}">
                <h3 id="organization-${organization.id}">${organization.name} <span class="muted">#${organization.id}</span></h3>
                ${projectsTable(projects)}
              </section>`,
              )
        }
      </section>
      <section aria-labelledby="issues-heading">
        <h2 id="issues-heading">Recent issues</h2>
        ${issuesSection(data)}
      </section>`,
  });
}

export function noTeamsPage(context: PageContext) {
  return page(context, {
    title: 'No team yet',
    body: html`<section class="card narrow">
      <h1>You are not in a team yet</h1>
      <p>Ask an owner of your team to add you, or create a team with the command line:</p>
      <pre class="code"><code>npx worklane bootstrap --email you@example.com --password … --team "My team" --organization "My org" --token-name "first token"</code></pre>
    </section>`,
  });
}
