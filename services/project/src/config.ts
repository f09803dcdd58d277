import { baseServiceSchema, databaseSchema, grpcAddress, loadConfig, port, secretKey, z } from '@worklane/config';

export const configSchema = z.object({
  ...baseServiceSchema('project'),
  ...databaseSchema('project'),
  HTTP_PORT: port(8081).describe('HTTP port of the API, /healthz, /readyz and /metrics'),
  GRPC_PORT: port(7002).describe('Port of the internal ProjectDirectory gRPC service'),
  IDENTITY_SIGNING_KEY: secretKey().describe('Key that verifies identities signed by the gateway and internal gRPC callers'),
});

export type Config = z.infer<typeof configSchema>;

export const loadProjectConfig = (env?: Record<string, string | undefined>) => loadConfig(configSchema, env);
