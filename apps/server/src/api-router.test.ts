import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { endpoints, type Contract } from '@gatehouse/api-contract';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { apiHandlers } from './api.js';
import { createApiRouter, type ApiHandlers } from './api-router.js';
import { apiRoutes } from './test-support/contract.js';
import { verifierOfRoleTokens } from './test-support/role-tokens.js';

/**
 * A feature added as the README's recipe says, in a test app: its endpoints in a contract, its handlers
 * in a table, nothing else. What the router must do for it without a line of the feature's own.
 */
const note = z.strictObject({ id: z.string(), text: z.string(), by: z.string() });
const notesContract = {
  noteList: {
    method: 'get',
    path: '/notes',
    summary: 'Notes, newest first',
    access: 'signed-in',
    query: z.strictObject({ tag: z.string().max(20, 'must be at most 20 characters').optional() }),
    response: z.strictObject({ notes: z.array(note) }),
  },
  noteGet: {
    method: 'get',
    path: '/notes/{id}',
    summary: 'One note',
    access: 'public',
    params: z.strictObject({ id: z.string().regex(/^n\d+$/, 'must be a note id') }),
    response: note,
    errors: { 404: 'There is no note with this id' },
  },
  noteCreate: {
    method: 'post',
    path: '/notes',
    summary: 'Adds a note',
    access: 'admin',
    body: z.strictObject({ text: z.string().min(1, 'must not be empty') }),
    response: note,
  },
} as const satisfies Contract;

const notes = [{ id: 'n1', text: 'first', by: 'someone' }];
const notesHandlers: ApiHandlers<typeof notesContract> = {
  noteList: ({ query: { tag } }) => ({ notes: tag === undefined ? notes : [] }),
  noteGet: ({ params: { id }, caller }) => {
    // A public endpoint has no caller: the type says so (null), and so does the value.
    expect(caller).toBeNull();
    return notes.find((n) => n.id === id) ?? null;
  },
  noteCreate: ({ body: { text }, caller: { user } }) => {
    const created = { id: `n${notes.length + 1}`, text, by: user.sub };
    notes.push(created);
    return created;
  },
};

/** Tokens named after their holder's role. */
const verify = verifierOfRoleTokens({ member: ['member'], admin: ['admin'] });

let server: Server;
let base: string;
beforeAll(async () => {
  const app = express();
  app.use(express.json());
  app.use('/api', createApiRouter(notesContract, notesHandlers, { verify }));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

async function call(path: string, init: RequestInit & { token?: string; json?: unknown } = {}) {
  const headers = new Headers(init.headers);
  if (init.token) headers.set('authorization', `Bearer ${init.token}`);
  if (init.json !== undefined) headers.set('content-type', 'application/json');
  const body = init.json === undefined ? null : JSON.stringify(init.json);
  const response = await fetch(`${base}${path}`, { ...init, headers, body });
  return { status: response.status, body: await response.json() };
}

describe('createApiRouter: a feature added by the recipe', () => {
  it('authorizes each endpoint by its access: public, signed-in (401 without a token), admin (403 without the role)', async () => {
    expect((await call('/notes/n1')).status).toBe(200);
    expect(await call('/notes')).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
    expect(await call('/notes', { token: 'forged' })).toMatchObject({
      status: 401,
      body: { error: 'invalid_token' },
    });
    expect(await call('/notes', { token: 'member' })).toEqual({ status: 200, body: { notes } });
    const post = { method: 'POST', json: { text: 'second' } };
    expect(await call('/notes', { ...post, token: 'member' })).toEqual({
      status: 403,
      body: { error: 'forbidden', message: 'This needs the admin role.' },
    });
    expect(await call('/notes', { ...post, token: 'admin' })).toEqual({
      status: 200,
      body: { id: 'n2', text: 'second', by: 'admin' },
    });
  });

  it('validates path parameters, query and body by their schemas, naming each bad one (400)', async () => {
    expect(await call('/notes?tag=x&colour=red', { token: 'member' })).toEqual({
      status: 400,
      body: { error: 'invalid_request', message: 'colour is not a parameter of this endpoint.' },
    });
    expect((await call(`/notes?tag=${'x'.repeat(21)}`, { token: 'member' })).body).toMatchObject({
      message: 'tag must be at most 20 characters.',
    });
    expect(await call('/notes/seven')).toEqual({
      status: 400,
      body: { error: 'invalid_request', message: 'id must be a note id.' },
    });
    expect(await call('/notes', { method: 'POST', token: 'admin', json: { text: '', by: 'me' } })).toEqual({
      status: 400,
      body: {
        error: 'invalid_request',
        message: 'text must not be empty; by is not a parameter of this endpoint.',
      },
    });
  });

  it("answers a handler's null with the endpoint's own 404 sentence", async () => {
    expect(await call('/notes/n99')).toEqual({
      status: 404,
      body: { error: 'not_found', message: 'There is no note with this id.' },
    });
  });

  it('routes exactly the endpoints of the contract', () => {
    const app = express();
    app.use('/api', createApiRouter(notesContract, notesHandlers, { verify }));
    expect(apiRoutes(app).sort()).toEqual(['get /notes', 'get /notes/{id}', 'post /notes']);
  });
});

describe('createApiRouter: the handlers and the contract agree, or the server does not start', () => {
  it('refuses an endpoint of the contract without a handler', () => {
    const { noteCreate: _left, ...incomplete } = notesHandlers;
    // @ts-expect-error: the table must name every endpoint of the contract.
    expect(() => createApiRouter(notesContract, incomplete, { verify })).toThrow(
      'Endpoints of the contract without a handler: noteCreate.',
    );
  });

  it('refuses a handler for an endpoint the contract does not have', () => {
    const extra = { ...notesHandlers, noteDelete: () => null };
    expect(() => createApiRouter(notesContract, extra, { verify })).toThrow(
      'Handlers for endpoints the contract does not have: noteDelete.',
    );
  });

  it("serves Gatehouse's own contract with Gatehouse's own handlers, every endpoint named", () => {
    const handlers = apiHandlers({ verify });
    expect(Object.keys(handlers).sort()).toEqual(Object.keys(endpoints).sort());
    // Without a telemetry store or user ids, only what can be answered is routed.
    const app = express();
    app.use('/api', createApiRouter(endpoints, handlers, { verify }));
    expect(apiRoutes(app).sort()).toEqual(['get /me', 'get /openapi.json']);
  });
});
