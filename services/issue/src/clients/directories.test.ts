import { rememberingProjectDirectory, type ProjectDirectory, type ProjectSummary } from './directories';

const project: ProjectSummary = { id: 3, organizationId: 2, teamId: 1, name: 'Backend API' };

function countingDirectory(answer: ProjectSummary | undefined) {
  const calls: string[] = [];
  const directory: ProjectDirectory = {
    async getProject(teamId, organizationId, projectId) {
      calls.push(`${teamId}/${organizationId}/${projectId}`);
      return answer;
    },
  };
  return { directory, calls };
}

describe('rememberingProjectDirectory', () => {
  it('answers a found project from memory until the time to live passes', async () => {
    let clock = 0;
    const { directory, calls } = countingDirectory(project);
    const remembering = rememberingProjectDirectory(directory, 1_000, 10, () => clock);
    await expect(remembering.getProject(1, 2, 3)).resolves.toEqual(project);
    clock = 999;
    await remembering.getProject(1, 2, 3);
    expect(calls).toHaveLength(1);
    clock = 1_000;
    await remembering.getProject(1, 2, 3);
    expect(calls).toHaveLength(2);
  });

  it('never remembers a project that was not found', async () => {
    const { directory, calls } = countingDirectory(undefined);
    const remembering = rememberingProjectDirectory(directory, 1_000, 10, () => 0);
    await remembering.getProject(1, 2, 3);
    await expect(remembering.getProject(1, 2, 3)).resolves.toBeUndefined();
    expect(calls).toHaveLength(2);
  });

  it('keeps separate answers per team, organization and project', async () => {
    const { directory, calls } = countingDirectory(project);
    const remembering = rememberingProjectDirectory(directory, 1_000, 10, () => 0);
    await remembering.getProject(1, 2, 3);
    await remembering.getProject(9, 2, 3);
    expect(calls).toEqual(['1/2/3', '9/2/3']);
  });
});
