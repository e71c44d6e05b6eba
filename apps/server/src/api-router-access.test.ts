import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type * as apiContract from '@gatehouse/api-contract';
import { accessLevels, mayAccess, type Contract } from '@gatehouse/api-contract';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApiRouter, type ApiHandlers } from './api-router.js';
import { verifierOfRoleTokens } from './test-support/role-tokens.js';

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
const anotherRule: typeof mayAccess = (access, caller) =>
  access === 'public' || (access === 'admin' ? caller !== null : (caller?.roles.includes('member') ?? false));

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

const verify = verifierOfRoleTokens(callers);

/** The refusals the guards counted, by reason. */
const counted: string[] = [];
const refusals = { count: (reason: string) => void counted.push(reason) };

let server: Server;
let base: string;
beforeAll(async () => {
  const app = express();
  app.use('/api', createApiRouter(contract, handlers, { verify, refusals }));
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
  it.each([
    ["Gatehouse's rule", undefined],
    ['another rule', anotherRule],
  ])('answers 200 where mayAccess lets the caller in, else 401 or 403, under %s', async (_, swapped) => {
    rule.swapped = swapped;
    const { answered, implied } = await decisions().finally(() => (rule.swapped = undefined));
    expect(answered).toEqual(implied);
  });
});

describe('the API router counts what its guards refuse', () => {
  it('by reason: no token for a 401, the missing role for a 403', async () => {
    counted.length = 0;
    const { answered } = await decisions();
    const statuses = answered.map((line) => line.slice(-3));
    expect(counted.filter((reason) => reason === 'missing')).toHaveLength(
      statuses.filter((status) => status === '401').length,
    );
    expect(counted.filter((reason) => reason === 'insufficient_role')).toHaveLength(
      statuses.filter((status) => status === '403').length,
    );
    expect(counted.length).toBe(statuses.filter((status) => status !== '200').length);
  });
});
