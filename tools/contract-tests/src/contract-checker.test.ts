import { ContractChecker, type ObservedResponse } from './contract-checker';

const checker = new ContractChecker();
const json = 'application/json; charset=utf-8';
const organization = { id: 1, team_id: 1, name: 'Platform', created_at: '2026-01-15T09:00:00.123456Z', updated_at: '2026-01-15T09:00:00.123456Z' };
const answer = (status: number, body: unknown, headers: Record<string, string> = {}): ObservedResponse => ({
  status,
  headers: { 'content-type': json, 'x-request-id': 'f3d2c1b0-0000-4000-8000-000000000001', ...headers },
  body,
  text: JSON.stringify(body),
});

describe('ContractChecker', () => {
  it('accepts a documented answer', () => {
    expect(checker.problems('createOrganization', answer(201, organization))).toEqual([]);
    expect(
      checker.problems('createOrganization', answer(422, { message: 'The name field is required.', code: 'validation_failed', errors: { name: ['The name field is required.'] } })),
    ).toEqual([]);
  });

  it('refuses an undocumented field, a wrong type, a missing required field', () => {
    expect(checker.problems('createOrganization', answer(201, { ...organization, secret: 'x' }))).toEqual([expect.stringMatching(/additional properties/)]);
    expect(checker.problems('createOrganization', answer(201, { ...organization, id: '1' }))).toEqual([expect.stringMatching(/must be integer/)]);
    expect(checker.problems('createOrganization', answer(404, { message: 'Not found.' }))).toEqual([expect.stringMatching(/required property 'code'/)]);
  });

  it('refuses an undocumented status and a missing or malformed request id', () => {
    expect(checker.problems('getProject', answer(409, { message: 'x', code: 'quota_exceeded' }))).toEqual([expect.stringMatching(/not documented/)]);
    const { 'x-request-id': _id, ...withoutId } = answer(201, organization).headers;
    expect(checker.problems('createOrganization', { ...answer(201, organization), headers: withoutId })).toEqual([expect.stringMatching(/X-Request-Id is missing/)]);
    expect(checker.problems('createOrganization', answer(201, organization, { 'x-request-id': 'has space' }))).toEqual([expect.stringMatching(/does not match/)]);
  });

  it('refuses a body where none is documented', () => {
    expect(checker.problems('deleteWebhook', { status: 204, headers: { 'x-request-id': 'a' }, body: null, text: '' })).toEqual([]);
    expect(checker.problems('deleteWebhook', { status: 204, headers: { 'x-request-id': 'a' }, body: {}, text: '{}' })).toEqual([expect.stringMatching(/a body where none/)]);
  });
});
