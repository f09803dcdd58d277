import { createGrpcClient, unaryCall, type grpc } from '@worklane/grpc';
import { loadProto, type ProjectProto, type TokenProto, type projectV1, type tokenV1 } from '@worklane/proto';
import type { LoadedConfig } from './config';
import { describeRpcError } from './errors';

/** Creating a user hashes its password; give slow machines room. */
const DEADLINE_MS = 15_000;
const CALLER = 'cli';

type Callback<Response> = (error: grpc.ServiceError | null, response?: Response) => void;

/** The gRPC clients a command uses, created on first use and closed together. */
export class Clients {
  private tokenClient?: tokenV1.TokenServiceClient;
  private accountClient?: tokenV1.AccountServiceClient;
  private projectClient?: projectV1.ProjectDirectoryClient;

  constructor(private readonly config: LoadedConfig) {}

  private tokenAddress(): string {
    return this.config.require('TOKEN_SERVICE_ADDR');
  }

  private get tokens(): tokenV1.TokenServiceClient {
    this.tokenClient ??= createGrpcClient(loadProto<TokenProto>('token').worklane.token.v1.TokenService, this.tokenAddress(), this.signing());
    return this.tokenClient;
  }

  private get accounts(): tokenV1.AccountServiceClient {
    this.accountClient ??= createGrpcClient(loadProto<TokenProto>('token').worklane.token.v1.AccountService, this.tokenAddress(), this.signing());
    return this.accountClient;
  }

  private get projects(): projectV1.ProjectDirectoryClient {
    this.projectClient ??= createGrpcClient(loadProto<ProjectProto>('project').worklane.project.v1.ProjectDirectory, this.config.require('PROJECT_GRPC_ADDR'), this.signing());
    return this.projectClient;
  }

  private signing() {
    return { caller: CALLER, signingKey: this.config.require('CLI_PRIVATE_KEY') };
  }

  private async call<Response>(service: 'token' | 'project', invoke: (metadata: grpc.Metadata, options: grpc.CallOptions, done: Callback<Response>) => unknown): Promise<Response> {
    try {
      return await unaryCall<Response>(invoke, DEADLINE_MS);
    } catch (error) {
      const address = service === 'token' ? this.tokenAddress() : this.config.require('PROJECT_GRPC_ADDR');
      throw describeRpcError(error, service, address);
    }
  }

  createUser(request: tokenV1.CreateUserRequest) {
    return this.call<tokenV1.User__Output>('token', (m, o, done) => this.accounts.CreateUser(request, m, o, done));
  }

  getUserByEmail(email: string) {
    return this.call<tokenV1.User__Output>('token', (m, o, done) => this.accounts.GetUserByEmail({ email }, m, o, done));
  }

  createTeam(request: tokenV1.CreateTeamRequest) {
    return this.call<tokenV1.Team__Output>('token', (m, o, done) => this.accounts.CreateTeam(request, m, o, done));
  }

  addMember(request: tokenV1.AddMemberRequest) {
    return this.call<tokenV1.Membership__Output>('token', (m, o, done) => this.accounts.AddMember(request, m, o, done));
  }

  createToken(request: tokenV1.CreateTokenRequest) {
    return this.call<tokenV1.CreateTokenResponse__Output>('token', (m, o, done) => this.tokens.CreateToken(request, m, o, done));
  }

  listTokens(teamId: number) {
    return this.call<tokenV1.ListTokensResponse__Output>('token', (m, o, done) => this.tokens.ListTokens({ team_id: teamId }, m, o, done));
  }

  revokeToken(teamId: number, tokenId: number) {
    return this.call<tokenV1.RevokeTokenResponse__Output>('token', (m, o, done) => this.tokens.RevokeToken({ team_id: teamId, token_id: tokenId }, m, o, done));
  }

  createOrganization(request: projectV1.CreateOrganizationRequest) {
    return this.call<projectV1.Organization__Output>('project', (m, o, done) => this.projects.CreateOrganization(request, m, o, done));
  }

  close(): void {
    this.tokenClient?.close();
    this.accountClient?.close();
    this.projectClient?.close();
  }
}
