import { render } from '../src/helm.mjs';
import { byComponent } from '../src/objects.mjs';

// How the delivery service starts its attempts: the chart's value reaches its environment.
const minimal = { valuesFile: 'minimal-values.yaml' };
const deliveryConfig = (objects) => byComponent(objects, 'ConfigMap', 'delivery').data;

test('attempts started per turn of the delivery loop: 8 by default, the value when set, for the delivery service only', () => {
  const objects = render(minimal);
  expect(deliveryConfig(objects).DELIVERY_LAUNCHES_PER_TURN).toBe('8');
  for (const name of ['gateway', 'token', 'project', 'webhook', 'issue']) expect(byComponent(objects, 'ConfigMap', name).data.DELIVERY_LAUNCHES_PER_TURN).toBeUndefined();
  expect(deliveryConfig(render({ ...minimal, set: ['webhookDelivery.launchesPerTurn=32'] })).DELIVERY_LAUNCHES_PER_TURN).toBe('32');
});

test("a team's new receiver connections: 50 a second after a burst of 10 by default, the values when set, for the delivery service only", () => {
  const objects = render(minimal);
  expect(deliveryConfig(objects)).toMatchObject({ DELIVERY_TEAM_CONNECTIONS_PER_SECOND: '50', DELIVERY_TEAM_CONNECTIONS_BURST: '10' });
  for (const name of ['gateway', 'token', 'project', 'webhook', 'issue']) expect(byComponent(objects, 'ConfigMap', name).data.DELIVERY_TEAM_CONNECTIONS_PER_SECOND).toBeUndefined();
  const set = deliveryConfig(render({ ...minimal, set: ['webhookDelivery.teamConnectionsPerSecond=2', 'webhookDelivery.teamConnectionsBurst=4'] }));
  expect(set).toMatchObject({ DELIVERY_TEAM_CONNECTIONS_PER_SECOND: '2', DELIVERY_TEAM_CONNECTIONS_BURST: '4' });
});
