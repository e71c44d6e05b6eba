import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type * as apiContract from '@gatehouse/api-contract';
import { accessLevels, mayAccess, type Contract } from '@gatehouse/api-contract';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApiRouter, type ApiHandlers } from './api-router.js';
import { InvalidTokenError, type ApiUser, type TokenVerifier } from './auth/token-verifier.js';

/**
 * The API decides who may call an endpoint by asking the contract's mayAccess, nothing of its own. Every
 * access level is called by every kind of caller, under the real rule and under another one swapped in:
 * a router or guard that wrote the rule again would agree with the first and not with the second.
 */
const rule = vi.hoisted(() => ({ swapped: undefined as undefined | typeof mayAccess }));
vi.mock('@gatehouse/api-contract', async (importOriginal) => {
  const contract = await importOriginal<typeof apiContract>();
  const asked: typeof mayAccess = (access, caller) => (rule.swapped ?? contract.mayAccess)(access, caller);
  return { ...contract, mayAccess: asked };
});

/** Not Gatehouse's rule: signed-in pages for members only, admin pages for anyone signed in. */
const anotherRule: typeof mayAccess = (access, caller) => {
  if (access === 'public') return true;
  if (access === 'admin') return caller !== null;
  return caller?.roles.includes('member') ?? false;
};

/** One endpoint per access level there is. */
const contract: Contract = Object.fromEntries(
  accessLevels.map((access) => [
    access,
    {
      method: 'get',
      path: `/${access}`,
      summary: access,
      access,
      response: { mediaType: 'text/plain', description: 'ok' },
    },
  ]),
);
const handlers: ApiHandlers<Contract> = Object.fromEntries(
  accessLevels.map((access) => [access, (_call, res) => void res.send('ok')]),
);

/** Callers by token: signed out (no token), or signed in with these roles. */
const callers: Record<string, readonly string[] | null> = {
  'signed-out': null,
  'no-role': [],
  member: ['member'],
  admin: ['admin'],
  'member-admin': ['member', 'admin'],
};

const verify = Object.assign(
  (token: string): Promise<ApiUser> => {
    const roles = callers[token];
    if (!roles) return Promise.reject(new InvalidTokenError('The token is not valid'));
    return Promise.resolve({
      sub: token,
      name: null,
      email: null,
      roles: [...roles],
      issuer: 'https://idp.test',
      expiresAt: null,
      verifiedBy: 'jwt',
      jkt: null,
    });
  },
  { withProfile: (user: ApiUser) => Promise.resolve(user) },
) satisfies TokenVerifier;

let server: Server;
let base: string;
beforeAll(async () => {
  const app = express();
  app.use('/api', createApiRouter(contract, handlers, { verify }));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

/** Every (access level, caller): the status the API answered, and the one mayAccess implies. */
async function decisions() {
  const answered: string[] = [];
  const implied: string[] = [];
  for (const access of accessLevels) {
    for (const [name, roles] of Object.entries(callers)) {
      const headers: Record<string, string> = roles ? { authorization: `Bearer ${name}` } : {};
      const { status } = await fetch(`${base}/${access}`, { headers });
      answered.push(`${access} for ${name}: ${status}`);
      const allowed = mayAccess(access, roles && { roles });
      implied.push(`${access} for ${name}: ${allowed ? 200 : roles ? 403 : 401}`);
    }
  }
  return { answered, implied };
}

describe('the API router asks mayAccess', () => {
  it('answers 200 where mayAccess lets the caller in, else 401 signed out and 403 signed in', async () => {
    const { answered, implied } = await decisions();
    expect(answered).toEqual(implied);
  });

  it('follows the rule mayAccess gives, whatever it is', async () => {
    rule.swapped = anotherRule;
    try {
      const { answered, implied } = await decisions();
      expect(answered).toEqual(implied);
    } finally {
      rule.swapped = undefined;
    }
  });
});
