import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, readEnvironment } from './read-environment.js';
import { environment } from './environment.js';

describe('readEnvironment', () => {
  const schema = environment.pick({ PORT: true, TRUST_PROXY: true, GATEHOUSE_DATA_DIR: true });

  it('gives the defaults, counting empty and blank values as unset', () => {
    expect(readEnvironment(schema, { PORT: '', TRUST_PROXY: '  ', OTHER: 'x' }, 'test')).toEqual({
      PORT: 3000,
      TRUST_PROXY: false,
      GATEHOUSE_DATA_DIR: './data',
    });
  });

  it('names every bad key, one a line, after the program that cannot start', () => {
    const read = () => readEnvironment(schema, { PORT: '0', TRUST_PROXY: 'yes' }, 'The tool');
    expect(read).toThrow(ConfigError);
    expect(read).toThrow(
      'The tool cannot start: the configuration is invalid.\n' +
        '  - PORT: must be between 1 and 65535\n' +
        "  - TRUST_PROXY: must be 1 or true (one proxy, from anywhere), 0 or false (none), or the proxies' " +
        'addresses and CIDR ranges (or loopback, linklocal, uniquelocal), comma-separated; not: yes',
    );
  });

  it('names a rule that ties keys together by the key it points at', () => {
    const tied = z.object({ A: z.string().optional() }).refine((env) => env.A !== undefined, {
      path: ['A'],
      message: 'is required',
    });
    expect(() => readEnvironment(tied, {}, 'x')).toThrow('  - A: is required');
  });
});
