import { randomBytes } from 'node:crypto';
import { z } from '@worklane/config';
import type { Pool } from '@worklane/db';
import { RpcError, type UnaryHandler } from '@worklane/grpc';
import type { tokenV1 } from '@worklane/proto';
import {
  AlreadyMemberError,
  DuplicateEmailError,
  findTeam,
  findUser,
  findUserByEmail,
  insertMembership,
  insertTeamWithOwner,
  insertUser,
  listMemberships,
  type UserRecord,
} from '../data/accounts';
import { deleteExpiredSessions, deleteSession, findLiveSession, insertSession, type SessionLifetime } from '../data/sessions';
import { forgetOldSignInAttempts, signInSucceeded, takeSignInAttempt } from '../data/sign-in-attempts';
import { decoyHash, hashPassword, verifyPassword } from '../domain/passwords';
import { hashToken } from '../domain/token-format';
import { displayName, email, id, parseRequest } from './validation';

const password = () => z.string({ error: 'must be a string' }).min(8, 'must be at least 8 characters').max(1024, 'must be at most 1024 characters');

/** Session secrets are 43 characters; anything much longer is not worth hashing. */
const sessionSecret = () => z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(256, 'is not a session id');

const createUserRequest = z.object({
  email: email(),
  password: password(),
  // Optional in the proto (empty string); the part of the address before the @ stands in.
  name: z.string({ error: 'must be a string' }).trim().max(255, 'must be 1 to 255 characters').default(''),
});
const getUserByEmailRequest = z.object({ email: email() });
const createTeamRequest = z.object({ name: displayName(), owner_user_id: id() });
const addMemberRequest = z.object({
  team_id: id(),
  user_id: id(),
  role: z.enum(['', 'owner', 'member'], { error: 'must be owner or member' }).transform((role) => (role === '' ? 'member' : role)),
});
const userIdRequest = z.object({ user_id: id() });
const verifyPasswordRequest = z.object({
  email: z.string({ error: 'must be a string' }).max(254, 'must be at most 254 characters'),
  password: z.string({ error: 'must be a string' }).max(1024, 'must be at most 1024 characters'),
  throttle: z
    .object({
      client_address: z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(64, 'must be at most 64 characters'),
      window_seconds: z.number().int().min(1, 'must be 1 to 86400').max(86_400, 'must be 1 to 86400'),
      max_per_account: z.number().int().min(1, 'must be at least 1'),
      max_per_address: z.number().int().min(1, 'must be at least 1'),
    })
    .nullish(),
});

/** Old sign-in counts are swept about once per this many throttled sign-ins. */
const SWEEP_EVERY = 200;
const sessionRequest = z.object({ id: sessionSecret() });

const toUser = (user: UserRecord): tokenV1.User => ({ id: user.id, email: user.email, name: user.name, created_at: user.created_at });

export interface AccountServiceDeps {
  pool: Pool;
  sessionLifetime: SessionLifetime;
}

type Handlers = {
  CreateUser: UnaryHandler<tokenV1.CreateUserRequest__Output, tokenV1.User>;
  GetUserByEmail: UnaryHandler<tokenV1.GetUserByEmailRequest__Output, tokenV1.User>;
  CreateTeam: UnaryHandler<tokenV1.CreateTeamRequest__Output, tokenV1.Team>;
  AddMember: UnaryHandler<tokenV1.AddMemberRequest__Output, tokenV1.Membership>;
  ListTeamsForUser: UnaryHandler<tokenV1.ListTeamsForUserRequest__Output, tokenV1.ListTeamsForUserResponse>;
  VerifyPassword: UnaryHandler<tokenV1.VerifyPasswordRequest__Output, tokenV1.User>;
  CreateSession: UnaryHandler<tokenV1.CreateSessionRequest__Output, tokenV1.Session>;
  GetSession: UnaryHandler<tokenV1.GetSessionRequest__Output, tokenV1.Session>;
  DeleteSession: UnaryHandler<tokenV1.DeleteSessionRequest__Output, tokenV1.DeleteSessionResponse>;
};

export function accountServiceHandlers({ pool, sessionLifetime }: AccountServiceDeps): Handlers {
  async function requireUser(userId: number): Promise<UserRecord> {
    const user = await findUser(pool, userId);
    if (!user) throw RpcError.notFound(`user ${userId} not found`);
    return user;
  }

  return {
    async CreateUser(request) {
      const input = parseRequest(createUserRequest, request);
      const name = input.name || input.email.split('@')[0]!.slice(0, 255);
      try {
        return toUser(await insertUser(pool, { email: input.email, name, passwordHash: await hashPassword(input.password) }));
      } catch (error) {
        if (error instanceof DuplicateEmailError) throw RpcError.alreadyExists('a user with this email already exists');
        throw error;
      }
    },

    async GetUserByEmail(request) {
      const input = parseRequest(getUserByEmailRequest, request);
      const user = await findUserByEmail(pool, input.email);
      if (!user) throw RpcError.notFound('no user with this email');
      return toUser(user);
    },

    async CreateTeam(request) {
      const input = parseRequest(createTeamRequest, request);
      await requireUser(input.owner_user_id);
      return insertTeamWithOwner(pool, input.name, input.owner_user_id);
    },

    async AddMember(request) {
      const input = parseRequest(addMemberRequest, request);
      if (!(await findTeam(pool, input.team_id))) throw RpcError.notFound(`team ${input.team_id} not found`);
      await requireUser(input.user_id);
      try {
        return await insertMembership(pool, input.team_id, input.user_id, input.role);
      } catch (error) {
        if (error instanceof AlreadyMemberError) throw RpcError.alreadyExists(`user ${input.user_id} is already a member of team ${input.team_id}`);
        throw error;
      }
    },

    async ListTeamsForUser(request) {
      const input = parseRequest(userIdRequest, request);
      await requireUser(input.user_id);
      return { memberships: await listMemberships(pool, input.user_id) };
    },

    async VerifyPassword(request) {
      const input = parseRequest(verifyPasswordRequest, request);
      const normalised = input.email.trim().toLowerCase();
      const throttle = input.throttle;
      if (throttle) {
        const attempt = await takeSignInAttempt(pool, normalised, throttle.client_address, {
          windowSeconds: throttle.window_seconds,
          maxPerAccount: throttle.max_per_account,
          maxPerAddress: throttle.max_per_address,
        });
        if (Math.random() < 1 / SWEEP_EVERY) void forgetOldSignInAttempts(pool).catch(() => {});
        if (!attempt.allowed) throw RpcError.resourceExhausted(`retry after ${attempt.retryAfterSeconds} s`);
      }
      const user = normalised ? await findUserByEmail(pool, normalised) : undefined;
      // An unknown address costs one hash too, so timing does not tell which addresses exist.
      const matches = await verifyPassword(input.password, user?.password_hash ?? (await decoyHash()));
      if (!user || !matches) throw RpcError.unauthenticated('invalid email or password');
      if (throttle) await signInSucceeded(pool, normalised, throttle.client_address);
      return toUser(user);
    },

    async CreateSession(request) {
      const input = parseRequest(userIdRequest, request);
      await requireUser(input.user_id);
      await deleteExpiredSessions(pool, input.user_id, sessionLifetime);
      const secret = randomBytes(32).toString('base64url');
      const session = await insertSession(pool, { secretHash: hashToken(secret), userId: input.user_id, csrfToken: randomBytes(32).toString('base64url') }, sessionLifetime);
      return { id: secret, ...session };
    },

    async GetSession(request) {
      const input = parseRequest(sessionRequest, request);
      const session = await findLiveSession(pool, hashToken(input.id), sessionLifetime);
      if (!session) throw RpcError.notFound('session not found or expired');
      return { id: input.id, ...session };
    },

    async DeleteSession(request) {
      const input = parseRequest(sessionRequest, request);
      await deleteSession(pool, hashToken(input.id));
      return {};
    },
  };
}
