import type { KeyObject } from 'node:crypto';
import { createGrpcClient, grpc, unaryCall } from '@worklane/grpc';
import { loadProto, type TokenProto, type tokenV1 } from '@worklane/proto';
import { ServiceUnavailableError } from '../errors';

export type User = tokenV1.User__Output;
export type Session = tokenV1.Session__Output;
export type Membership = tokenV1.Membership__Output;
export type Team = tokenV1.Team__Output;
export type ApiToken = tokenV1.ApiToken__Output;
export type CreatedToken = { token: ApiToken; value: string };

/** A request the token service refused, with its message (which it writes to be shown). */
export class AccountRequestError extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
  ) {
    super(message);
    this.name = 'AccountRequestError';
  }
}

/** The token service refused to check a password: too many sign-in attempts for now. */
export class SignInThrottledError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super(`too many sign-in attempts; retry after ${retryAfterSeconds} s`);
    this.name = 'SignInThrottledError';
  }
}

/** What the console asks of the token service: accounts, sessions, memberships and API tokens. */
export interface Accounts {
  /**
   * The user when the password is right; undefined on any mismatch. With `throttle`, the token
   * service counts the attempt first and refuses it past the limits (SignInThrottledError).
   */
  verifyPassword(email: string, password: string, throttle?: tokenV1.SignInThrottle): Promise<User | undefined>;
  createUser(email: string, password: string, name: string): Promise<User>;
  createTeam(name: string, ownerUserId: number): Promise<Team>;
  /** Undefined when the user no longer exists. */
  listMemberships(userId: number): Promise<Membership[] | undefined>;
  createSession(userId: number): Promise<Session>;
  /** Undefined when the session is unknown or expired. */
  getSession(id: string): Promise<Session | undefined>;
  deleteSession(id: string): Promise<void>;
  listTokens(teamId: number): Promise<ApiToken[]>;
  createToken(teamId: number, userId: number, name: string): Promise<CreatedToken>;
  revokeToken(teamId: number, tokenId: number): Promise<void>;
  close(): void;
}

const UNREACHABLE = new Set([grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED, grpc.status.INTERNAL, grpc.status.UNKNOWN]);

function isServiceError(error: unknown): error is grpc.ServiceError {
  return typeof error === 'object' && error !== null && 'code' in error && typeof (error as { code: unknown }).code === 'number';
}

/**
 * Runs a call and sorts its failures: the service being away or broken is a 503 for the person,
 * `expected` codes become undefined, and any other refusal keeps the service's message.
 */
async function call<Response>(invoke: Parameters<typeof unaryCall<Response>>[0], expected: grpc.status[] = []): Promise<Response | undefined> {
  try {
    return await unaryCall<Response>(invoke);
  } catch (error) {
    if (!isServiceError(error)) throw error;
    if (expected.includes(error.code)) return undefined;
    if (UNREACHABLE.has(error.code)) throw new ServiceUnavailableError('token', error);
    throw new AccountRequestError(error.code, error.details || error.message);
  }
}

function required<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('the token service answered without a result');
  return value;
}

/** The token service over signed gRPC. */
export function createAccounts(address: string, signingKey: KeyObject): Accounts {
  const proto = loadProto<TokenProto>('token').worklane.token.v1;
  const options = { caller: 'console', signingKey };
  const accounts = createGrpcClient(proto.AccountService, address, options);
  const tokens = createGrpcClient(proto.TokenService, address, options);

  return {
    verifyPassword: async (email, password, throttle) => {
      try {
        // An address or password too long to be real is a mismatch like any other.
        return await call<User>(
          (m, o, done) => accounts.VerifyPassword({ email, password, throttle }, m, o, done),
          [grpc.status.UNAUTHENTICATED, grpc.status.NOT_FOUND, grpc.status.INVALID_ARGUMENT],
        );
      } catch (error) {
        const wait = error instanceof AccountRequestError && error.code === grpc.status.RESOURCE_EXHAUSTED && /retry after (\d+) s/.exec(error.message);
        if (wait) throw new SignInThrottledError(Number(wait[1]));
        throw error;
      }
    },
    createUser: async (email, password, name) => required(await call<User>((m, o, done) => accounts.CreateUser({ email, password, name }, m, o, done))),
    createTeam: async (name, ownerUserId) => required(await call<Team>((m, o, done) => accounts.CreateTeam({ name, owner_user_id: ownerUserId }, m, o, done))),
    listMemberships: async (userId) =>
      (await call<tokenV1.ListTeamsForUserResponse__Output>((m, o, done) => accounts.ListTeamsForUser({ user_id: userId }, m, o, done), [grpc.status.NOT_FOUND]))?.memberships,
    createSession: async (userId) => required(await call<Session>((m, o, done) => accounts.CreateSession({ user_id: userId }, m, o, done))),
    getSession: (id) => call<Session>((m, o, done) => accounts.GetSession({ id }, m, o, done), [grpc.status.NOT_FOUND, grpc.status.INVALID_ARGUMENT]),
    deleteSession: async (id) => {
      await call((m, o, done) => accounts.DeleteSession({ id }, m, o, done), [grpc.status.NOT_FOUND]);
    },
    listTokens: async (teamId) => required(await call<tokenV1.ListTokensResponse__Output>((m, o, done) => tokens.ListTokens({ team_id: teamId }, m, o, done))).tokens,
    createToken: async (teamId, userId, name) => {
      const created = required(await call<tokenV1.CreateTokenResponse__Output>((m, o, done) => tokens.CreateToken({ team_id: teamId, user_id: userId, name }, m, o, done)));
      return { token: required(created.token ?? undefined), value: created.value };
    },
    revokeToken: async (teamId, tokenId) => {
      await call((m, o, done) => tokens.RevokeToken({ team_id: teamId, token_id: tokenId }, m, o, done));
    },
    close: () => {
      accounts.close();
      tokens.close();
    },
  };
}
