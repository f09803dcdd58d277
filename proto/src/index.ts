import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import loaderOptions from '../loader-options.json';

export type { ProtoGrpcType as TokenProto } from './generated/token';
export type { ProtoGrpcType as ProjectProto } from './generated/project';
export type { ProtoGrpcType as WebhookProto } from './generated/webhook';

/** The directory that holds `worklane/<service>/v1/*.proto`. */
export const PROTO_ROOT = join(__dirname, '..', '..');

/** The loader options shared by run-time loading and `proto-loader-gen-types` (loader-options.json). */
export const LOADER_OPTIONS: protoLoader.Options = {
  ...loaderOptions,
  longs: loaderOptions.longs === 'Number' ? Number : String,
  enums: String,
  includeDirs: [PROTO_ROOT],
};

export type ProtoName = 'token' | 'project' | 'webhook';

/** Loads one versioned proto and returns its grpc-js package object. */
export function loadProto<T>(name: ProtoName): T {
  const definition = protoLoader.loadSync(`worklane/${name}/v1/${name}.proto`, LOADER_OPTIONS);
  return grpc.loadPackageDefinition(definition) as unknown as T;
}

export * as tokenV1 from './generated/worklane/token/v1';
export * as projectV1 from './generated/worklane/project/v1';
export * as webhookV1 from './generated/worklane/webhook/v1';
