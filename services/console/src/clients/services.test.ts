import { serviceForPath } from './services';

describe('serviceForPath', () => {
  it('routes API paths to the service that owns them, as the gateway does', () => {
    expect(serviceForPath('/api/v1/teams/1/organizations')).toBe('project');
    expect(serviceForPath('/api/v1/teams/1/organizations/2/projects')).toBe('project');
    expect(serviceForPath('/api/v1/teams/1/organizations/2/projects/3')).toBe('project');
    expect(serviceForPath('/api/v1/teams/1/organizations/2/projects/3/issues')).toBe('issue');
    expect(serviceForPath('/api/v1/teams/1/organizations/2/projects/3/issues/4')).toBe('issue');
    expect(serviceForPath('/api/v1/teams/1/webhooks')).toBe('webhook');
    expect(serviceForPath('/api/v1/teams/1/webhooks/5')).toBe('webhook');
    expect(serviceForPath('/api/v1/teams/1/webhooks/5/deliveries?limit=20')).toBe('delivery');
    expect(serviceForPath('/api/v1/teams/1/webhooks/5/ping')).toBe('delivery');
    expect(serviceForPath('/api/v1/teams/1/deliveries/9')).toBe('delivery');
    expect(serviceForPath('/api/v1/teams/1/deliveries/9/redeliver')).toBe('delivery');
  });

  it('refuses a path no service serves', () => {
    expect(() => serviceForPath('/api/v1/teams/1/unknown')).toThrow('no service serves');
    expect(() => serviceForPath('/teams/1/webhooks')).toThrow('no service serves');
  });
});
