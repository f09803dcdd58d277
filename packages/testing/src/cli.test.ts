import { describe, expect, it } from '@jest/globals';

import { cliEnv, parseJsonLine } from './cli';

describe('parseJsonLine', () => {
  it('takes the last JSON object line', () => {
    expect(parseJsonLine('warning: something\n{"a":1}\n{"token_id":2,"token":"wl_x"}\n\n')).toEqual({ token_id: 2, token: 'wl_x' });
    expect(() => parseJsonLine('nothing here')).toThrow(/no JSON line/);
  });
});

describe('cliEnv', () => {
  it('passes the addresses, key and database of the system', () => {
    expect(cliEnv({ env: { TOKEN_SERVICE_ADDR: 'a:1', PROJECT_GRPC_ADDR: 'b:2', CLI_PRIVATE_KEY: 'k', DATABASE_URL: 'postgres://x', HTTP_PORT: '1' } })).toEqual({
      TOKEN_SERVICE_ADDR: 'a:1',
      PROJECT_GRPC_ADDR: 'b:2',
      CLI_PRIVATE_KEY: 'k',
      DATABASE_URL: 'postgres://x',
    });
  });
});
