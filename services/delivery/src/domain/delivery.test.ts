import { deliveryId } from './delivery';

describe('deliveryId', () => {
  const event = '1b4e28ba-2fa1-4d2b-883f-0016d3cca427';

  it('is the same for the same event and webhook, whoever computes it', () => {
    expect(deliveryId(event, 7)).toBe(deliveryId(event.toUpperCase(), 7));
  });

  it('differs between webhooks and between events', () => {
    expect(deliveryId(event, 7)).not.toBe(deliveryId(event, 8));
    expect(deliveryId(event, 7)).not.toBe(deliveryId('2b4e28ba-2fa1-4d2b-883f-0016d3cca427', 7));
  });

  it('is a well-formed version 5 UUID', () => {
    expect(deliveryId(event, 7)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
