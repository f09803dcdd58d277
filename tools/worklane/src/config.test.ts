import { generateKeyPairSync } from 'node:crypto';
import { loadCliConfig } from './config';
import { UsageError } from './errors';

const PEM = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

const running = {
  TOKEN_SERVICE_ADDR: '127.0.0.1:7001',
  PROJECT_GRPC_ADDR: '127.0.0.1:7002',
  CLI_PRIVATE_KEY: PEM,
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres',
};

describe('CLI configuration', () => {
  it('takes what the environment does not set from the running `npm start`', () => {
    const config = loadCliConfig({ TOKEN_SERVICE_ADDR: 'token:7001' }, running);
    expect(config.require('TOKEN_SERVICE_ADDR')).toBe('token:7001');
    expect(config.require('PROJECT_GRPC_ADDR')).toBe('127.0.0.1:7002');
    expect(config.require('CLI_PRIVATE_KEY').asymmetricKeyType).toBe('ed25519');
  });

  it('treats an empty variable as unset', () => {
    expect(loadCliConfig({ DATABASE_URL: '' }, running).require('DATABASE_URL')).toBe(running.DATABASE_URL);
  });

  it('never takes DATABASE_SCHEMA from the running system', () => {
    expect(loadCliConfig({}, { ...running, DATABASE_SCHEMA: 'elsewhere' }).values.DATABASE_SCHEMA).toBeUndefined();
    expect(loadCliConfig({ DATABASE_SCHEMA: 'mine' }, running).values.DATABASE_SCHEMA).toBe('mine');
  });

  it('takes GATEWAY_URL from the running system, but never an API token', () => {
    const token = `wl_${'a'.repeat(36)}`;
    const config = loadCliConfig({}, { ...running, GATEWAY_URL: 'http://127.0.0.1:8080', WORKLANE_TOKEN: token });
    expect(config.require('GATEWAY_URL')).toBe('http://127.0.0.1:8080');
    expect(config.values.WORKLANE_TOKEN).toBeUndefined();
    expect(() => config.require('WORKLANE_TOKEN')).toThrow(/WORKLANE_TOKEN is not set/);
    expect(loadCliConfig({ WORKLANE_TOKEN: token }, running).require('WORKLANE_TOKEN')).toBe(token);
    expect(loadCliConfig({}, running).values.API_TIMEOUT_MS).toBe(15_000);
  });

  it('says how to provide a variable a command needs when nothing provides it', () => {
    const config = loadCliConfig({}, {});
    expect(() => config.require('CLI_PRIVATE_KEY')).toThrow(UsageError);
    expect(() => config.require('CLI_PRIVATE_KEY')).toThrow(/CLI_PRIVATE_KEY is not set and no running `npm start` was found/);
  });

  it('rejects malformed values, naming the variable', () => {
    expect(() => loadCliConfig({ TOKEN_SERVICE_ADDR: 'no port' }, {})).toThrow(/TOKEN_SERVICE_ADDR/);
    expect(() => loadCliConfig({ CLI_PRIVATE_KEY: 'short' }, {})).toThrow(/CLI_PRIVATE_KEY: must be an Ed25519 private key/);
    expect(() => loadCliConfig({ GATEWAY_URL: 'ftp://example.com' }, {})).toThrow(/GATEWAY_URL: must be an http/);
    expect(() => loadCliConfig({ WORKLANE_TOKEN: 'wl_not-a-token' }, {})).toThrow(/WORKLANE_TOKEN: must be an API token/);
    expect(() => loadCliConfig({ WORKLANE_TOKEN: 'wl_not-a-token' }, {})).not.toThrow(/not-a-token/);
  });
});
