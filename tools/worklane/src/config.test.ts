import { loadCliConfig } from './config';
import { UsageError } from './errors';

const running = {
  TOKEN_SERVICE_ADDR: '127.0.0.1:7001',
  PROJECT_GRPC_ADDR: '127.0.0.1:7002',
  IDENTITY_SIGNING_KEY: 'r'.repeat(64),
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres',
};

describe('CLI configuration', () => {
  it('takes what the environment does not set from the running `npm start`', () => {
    const config = loadCliConfig({ TOKEN_SERVICE_ADDR: 'token:7001' }, running);
    expect(config.require('TOKEN_SERVICE_ADDR')).toBe('token:7001');
    expect(config.require('PROJECT_GRPC_ADDR')).toBe('127.0.0.1:7002');
    expect(config.require('IDENTITY_SIGNING_KEY')).toBe('r'.repeat(64));
  });

  it('treats an empty variable as unset', () => {
    expect(loadCliConfig({ DATABASE_URL: '' }, running).require('DATABASE_URL')).toBe(running.DATABASE_URL);
  });

  it('never takes DATABASE_SCHEMA from the running system', () => {
    expect(loadCliConfig({}, { ...running, DATABASE_SCHEMA: 'elsewhere' }).values.DATABASE_SCHEMA).toBeUndefined();
    expect(loadCliConfig({ DATABASE_SCHEMA: 'mine' }, running).values.DATABASE_SCHEMA).toBe('mine');
  });

  it('says how to provide a variable a command needs when nothing provides it', () => {
    const config = loadCliConfig({}, {});
    expect(() => config.require('IDENTITY_SIGNING_KEY')).toThrow(UsageError);
    expect(() => config.require('IDENTITY_SIGNING_KEY')).toThrow(/IDENTITY_SIGNING_KEY is not set and no running `npm start` was found/);
  });

  it('rejects malformed values, naming the variable', () => {
    expect(() => loadCliConfig({ TOKEN_SERVICE_ADDR: 'no port' }, {})).toThrow(/TOKEN_SERVICE_ADDR/);
    expect(() => loadCliConfig({ IDENTITY_SIGNING_KEY: 'short' }, {})).toThrow(/IDENTITY_SIGNING_KEY: must be at least 32 characters/);
  });
});
