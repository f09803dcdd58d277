import { ConfigError } from '@worklane/config';
import { signingKeyPair } from '@worklane/testing';
import { loadIssueConfig } from './config';

const required = {
  DATABASE_URL: 'postgres://localhost/worklane',
  NATS_URL: 'nats://127.0.0.1:4222',
  SIGNING_PRIVATE_KEY: signingKeyPair().privateKey,
  GATEWAY_PUBLIC_KEY: signingKeyPair().publicKey,
  CONSOLE_PUBLIC_KEY: signingKeyPair().publicKey,
};

describe('issue configuration', () => {
  it('defaults to the ports and addresses of docs/architecture.md', () => {
    const config = loadIssueConfig(required);
    expect(config).toMatchObject({ HTTP_PORT: 8083, PROJECT_GRPC_ADDR: '127.0.0.1:7002', TOKEN_SERVICE_ADDR: '127.0.0.1:7001', OUTBOX_BATCH_SIZE: 100 });
  });

  it('refuses a missing NATS_URL and a bad project address, naming them', () => {
    let problems: string[] = [];
    try {
      loadIssueConfig({ ...required, NATS_URL: undefined as unknown as string, PROJECT_GRPC_ADDR: 'project' });
    } catch (error) {
      problems = (error as ConfigError).problems;
    }
    expect(problems.map((problem) => problem.split(':')[0]).sort()).toEqual(['NATS_URL', 'PROJECT_GRPC_ADDR']);
  });
});
