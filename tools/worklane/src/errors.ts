import { grpc } from '@worklane/grpc';

/** A mistake in how the CLI was called: printed with a pointer to --help, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A failure the user can act on (service unreachable, validation refused...): exit code 1. */
export class CommandError extends Error {
  override name = 'CommandError';

  /** The gRPC status that caused it, when a call failed. */
  constructor(
    message: string,
    readonly rpcCode?: grpc.status,
  ) {
    super(message);
  }
}

/** Turns a gRPC failure into a sentence about what to do, instead of a stack trace. */
export function describeRpcError(error: unknown, service: string, address: string): Error {
  const rpc = error as Partial<grpc.ServiceError>;
  if (typeof rpc.code !== 'number') return error instanceof Error ? error : new Error(String(error));
  const detail = rpc.details || rpc.message || '';
  return new CommandError(explain(rpc.code, detail, service, address), rpc.code);
}

function explain(code: grpc.status, detail: string, service: string, address: string): string {
  switch (code) {
    case grpc.status.UNAVAILABLE:
      return `cannot reach the ${service} service at ${address} (${detail}). Is the system running (\`npm start\`)?`;
    case grpc.status.DEADLINE_EXCEEDED:
      return `the ${service} service at ${address} did not answer in time`;
    case grpc.status.UNAUTHENTICATED:
      return `the ${service} service refused the call (${detail}): CLI_PRIVATE_KEY is not the key whose public half the running system holds (CLI_PUBLIC_KEY)`;
    case grpc.status.PERMISSION_DENIED:
      return `the ${service} service does not accept this call from the CLI (${detail})`;
    case grpc.status.UNIMPLEMENTED:
      return `the ${service} service at ${address} does not implement this call (${detail})`;
    case grpc.status.INTERNAL:
    case grpc.status.UNKNOWN:
      return `the ${service} service failed (${detail}); see its logs`;
    default:
      return detail;
  }
}
