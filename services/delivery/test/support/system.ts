import { api, bootstrapTeam, startNatsServer, startSystem, type ApiClient, type BootstrapResult, type EnvInput, type NatsServer, type System } from '@worklane/testing';
import { Receiver } from './receiver';
import { createTestCertificate, type TestCertificate } from './tls';

export interface DeliverySystemOptions {
  /** WEBHOOK_RETRY_SCHEDULE of the delivery service. */
  retrySchedule?: string;
  /** Extra variables for the delivery service. */
  delivery?: EnvInput;
  /** Extra variables for every service. */
  env?: EnvInput;
  /** Host names the receiver's certificate is valid for, besides localhost and 127.0.0.1. */
  certificateNames?: string[];
}

/** A team with an organization and a project, acting through the gateway with its token. */
export interface TestTeam extends BootstrapResult {
  client: ApiClient;
  projectId: number;
}

export interface DeliverySystem {
  system: System;
  /** A NATS server of this test file alone: the stream and consumer names are global to a server. */
  nats: NatsServer;
  receiver: Receiver;
  certificate: TestCertificate;
  /** Variables the delivery service was started with (for replicas and restarts). */
  deliveryEnv: EnvInput;
  newTeam(name?: string): Promise<TestTeam>;
  stop(): Promise<void>;
}

/**
 * Every service but the console, wired as `npm start` wires them, with a dedicated NATS server,
 * a real HTTPS receiver whose self-signed certificate the delivery service trusts
 * (NODE_EXTRA_CA_CERTS), 127.0.0.0/8 allowed as a webhook destination, and short timeouts.
 */
export async function startDeliverySystem(options: DeliverySystemOptions = {}): Promise<DeliverySystem> {
  const certificate = createTestCertificate(['localhost', '127.0.0.1', ...(options.certificateNames ?? [])]);
  const nats = await startNatsServer();
  const receiver = await Receiver.start(certificate);
  const deliveryEnv: EnvInput = {
    NODE_EXTRA_CA_CERTS: certificate.certPath,
    WEBHOOK_RETRY_SCHEDULE: options.retrySchedule ?? '0,1,1',
    WEBHOOK_TIMEOUT_MS: 2_000,
    WEBHOOK_CONNECT_TIMEOUT_MS: 1_000,
    DELIVERY_POLL_INTERVAL_MS: 200,
    DELIVERY_LEASE_MS: 5_000,
    EVENT_ACK_WAIT_MS: 3_000,
    // A receiver that keeps failing is circuit-broken; short cool-downs keep the tests quick.
    DELIVERY_BREAKER_COOL_DOWN_MS: 300,
    DELIVERY_BREAKER_MAX_COOL_DOWN_MS: 1_000,
    ...options.delivery,
  };
  let system: System;
  try {
    system = await startSystem({
      services: ['token', 'project', 'webhook', 'issue', 'delivery', 'gateway'],
      env: { NATS_URL: nats.url, WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8', LOG_LEVEL: 'warn', ...options.env },
      serviceEnv: { delivery: deliveryEnv },
    });
  } catch (error) {
    await Promise.allSettled([receiver.stop(), nats.stop()]);
    certificate.remove();
    throw error;
  }
  let teams = 0;
  return {
    system,
    nats,
    receiver,
    certificate,
    deliveryEnv,
    async newTeam(name = `Team ${++teams}`) {
      const team = await bootstrapTeam(system, { teamName: name, organizationName: `${name} org` });
      const client = api(system, team.token);
      const project = await client.post(`/teams/${team.team_id}/organizations/${team.organization_id}/projects`, { name: 'Backend API' });
      if (project.status !== 201) throw new Error(`creating a project failed: ${project.status} ${project.text}`);
      return { ...team, client, projectId: project.body.id };
    },
    async stop() {
      await system.stop();
      await Promise.allSettled([receiver.stop(), nats.stop()]);
      certificate.remove();
    },
  };
}

export const issuesPath = (team: TestTeam) => `/teams/${team.team_id}/organizations/${team.organization_id}/projects/${team.projectId}/issues`;

export async function createWebhook(team: TestTeam, body: { url: string; events: string[]; secret?: string; active?: boolean }) {
  const response = await team.client.post(`/teams/${team.team_id}/webhooks`, body);
  if (response.status !== 201) throw new Error(`creating a webhook failed: ${response.status} ${response.text}`);
  return response.body as { id: number; url: string; events: string[]; active: boolean };
}

export async function createIssue(team: TestTeam, body: Record<string, unknown>) {
  const response = await team.client.post(issuesPath(team), body);
  if (response.status !== 201) throw new Error(`creating an issue failed: ${response.status} ${response.text}`);
  return response.body as { id: number; number: number; title: string; updated_at: string };
}

export async function updateIssue(team: TestTeam, issueId: number, body: Record<string, unknown>) {
  const response = await team.client.patch(`${issuesPath(team)}/${issueId}`, body);
  if (response.status !== 200) throw new Error(`updating an issue failed: ${response.status} ${response.text}`);
  return response.body as { id: number; updated_at: string };
}

/** Polls `read` until `done` holds for its result, within `timeoutMs`. */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000, what = 'the condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last value: ${JSON.stringify(value)?.slice(0, 2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The JSON body of a received delivery. */
export const payloadOf = (request: { body: Buffer }) => JSON.parse(request.body.toString('utf8'));
