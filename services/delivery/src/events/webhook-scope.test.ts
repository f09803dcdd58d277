import { inScope } from './webhook-scope';

const scope = (organizationIds: number[], projectIds: number[]) => ({ organizationIds, projectIds });

describe('inScope', () => {
  it('lets every event through a webhook without a scope', () => {
    expect(inScope(scope([], []), { organization_id: 1, project_id: 2 })).toBe(true);
    expect(inScope(scope([], []), {})).toBe(true);
  });

  it('keeps a webhook scoped to organizations to their events', () => {
    expect(inScope(scope([1, 3], []), { organization_id: 3, project_id: 9 })).toBe(true);
    expect(inScope(scope([1, 3], []), { organization_id: 2, project_id: 9 })).toBe(false);
  });

  it('keeps a webhook scoped to projects to their events', () => {
    expect(inScope(scope([], [9]), { organization_id: 3, project_id: 9 })).toBe(true);
    expect(inScope(scope([], [9]), { organization_id: 3, project_id: 8 })).toBe(false);
  });

  it('needs both when both are set', () => {
    expect(inScope(scope([3], [9]), { organization_id: 3, project_id: 9 })).toBe(true);
    expect(inScope(scope([3], [9]), { organization_id: 4, project_id: 9 })).toBe(false);
    expect(inScope(scope([3], [9]), { organization_id: 3, project_id: 8 })).toBe(false);
  });

  it('does not send an event that cannot be shown to be inside the scope (no organization or project)', () => {
    expect(inScope(scope([3], []), { project_id: 9 })).toBe(false);
    expect(inScope(scope([], [9]), { organization_id: 3 })).toBe(false);
  });
});
