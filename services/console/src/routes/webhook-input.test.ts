import type { Webhook } from '../resources';
import { EMPTY_WEBHOOK_FORM, formValuesOf } from '../views/webhook-form';
import { changesOf, readWebhookForm, settingsOf } from './webhook-input';

const webhook: Webhook = {
  id: 5,
  team_id: 7,
  url: 'https://example.com/hook',
  events: ['issue.created', 'issue.updated'],
  active: true,
  created_at: '2026-01-15T09:00:00.000000Z',
  updated_at: '2026-01-15T09:00:00.000000Z',
  description: 'Support desk',
  filters: { organization_ids: [], project_ids: [10, 12] },
  rate_limit_per_second: 5,
  operational_events: ['webhook.disabled'],
  disabled_reason: null,
  disabled_at: null,
  ed25519_public_key: `whpk_${'A'.repeat(43)}=`,
  secret_rotated_at: null,
};

describe('the webhook form', () => {
  it('reads every field, repeated checkboxes as lists', () => {
    const values = readWebhookForm({
      url: '  https://example.com/hook  ',
      events: 'issue.created',
      description: 'Desk',
      organization_ids: ['1', '2'],
      project_ids: '10',
      rate_limit_per_second: ' 3 ',
      operational_events: ['webhook.failing', 'webhook.disabled'],
      ed25519_signing: 'true',
      active: 'true',
    });
    expect(values).toEqual({
      url: 'https://example.com/hook',
      events: ['issue.created'],
      secret: '',
      active: true,
      description: 'Desk',
      organization_ids: ['1', '2'],
      project_ids: ['10'],
      rate_limit_per_second: '3',
      operational_events: ['webhook.failing', 'webhook.disabled'],
      ed25519_signing: true,
    });
  });

  it('turns the form into the API settings: ids as numbers, an empty rate limit or description as null', () => {
    const { settings } = settingsOf({ ...EMPTY_WEBHOOK_FORM, url: 'https://example.com/x', project_ids: ['12', '10', '10', 'x'], description: '  ' });
    expect(settings).toMatchObject({ filters: { organization_ids: [], project_ids: [10, 12] }, rate_limit_per_second: null, description: null, ed25519_signing: false });
  });

  it('refuses a rate limit that is not a whole number before calling the API', () => {
    expect(settingsOf({ ...EMPTY_WEBHOOK_FORM, rate_limit_per_second: '2.5' })).toEqual({ errors: { rate_limit_per_second: [expect.stringMatching(/whole number/)] } });
    expect(settingsOf({ ...EMPTY_WEBHOOK_FORM, rate_limit_per_second: 'lots' }).errors).toBeDefined();
  });

  it('sends only what changed, so an untouched URL is not checked again and an untouched ed25519 key is kept', () => {
    const unchanged = settingsOf(formValuesOf(webhook)).settings!;
    expect(changesOf(webhook, unchanged)).toEqual({});
    const reordered = settingsOf({ ...formValuesOf(webhook), events: ['issue.updated', 'issue.created'], project_ids: ['12', '10'] }).settings!;
    expect(changesOf(webhook, reordered)).toEqual({});
    const edited = settingsOf({ ...formValuesOf(webhook), rate_limit_per_second: '', project_ids: [], ed25519_signing: false }).settings!;
    expect(changesOf(webhook, edited)).toEqual({ rate_limit_per_second: null, filters: { organization_ids: [], project_ids: [] }, ed25519_signing: false });
  });
});
