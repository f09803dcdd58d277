// Test helpers for Worklane's integration tests: databases, service processes, whole systems,
// the CLI, an API client and extra NATS servers. See README.md.
export { api, apiUrl, type ApiClient, type ApiResponse, type ApiTarget, type RequestOptions } from './api';
export { bootstrapTeam, cliEnv, createToken, parseJsonLine, revokeToken, runCli, type BootstrapResult, type CliResult, type HasEnv } from './cli';
export { createTestDatabase, type TestDatabase } from './database';
export { createServiceDatabase, type ServiceDatabase } from './service-database';
export { publicKeysOf, randomId, randomKey, signerOf, signingKeyPair, signingKeyPairs, type SigningKeyPair } from './keys';
export { natsServerBin, startNatsServer, type NatsServer } from './nats';
export { freePort, freePorts } from './ports';
export { cliPath, findExecutable, repoRoot, serviceMain } from './repo';
export { startService, type EnvInput, type ExitInfo, type ServiceHandle, type StartServiceOptions } from './service';
export {
  GRPC_SERVICES,
  HTTP_CALLEES,
  SERVICES,
  API_STACK,
  START_ORDER,
  serviceInfo,
  serviceUrlEnv,
  startOrder,
  stopStages,
  type Dependency,
  type ServiceEntry,
  type ServiceInfo,
  type ServiceName,
} from '@worklane/config';
export { PASS_THROUGH, defaultPorts, ownEnv, privateEnv, serviceEnv, sharedEnv, type Env, type Keys, type Ports } from './services';
export { startSystem, type StartSystemOptions, type System } from './system';
export { signedCaller, type Caller, type Reply } from './signed-caller';
export { startTcpRelay, throughRelay, type TcpRelay } from './tcp-relay';
