import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { clientAddress, compileTrust, type TrustProxySetting } from '@gatehouse/collector';
import express from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { trustProxies } from './proxy-trust.js';

const servers: Server[] = [];
afterAll(() => Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve)))));

/** An app that says who it thinks called it: Express's req.ip and req.protocol, and the collector's rule. */
async function echo(trust: TrustProxySetting) {
  const app = express();
  trustProxies(app, trust);
  app.get('/', (req, res) => {
    res.json({
      ip: req.ip,
      protocol: req.protocol,
      secure: req.secure,
      source: clientAddress(req, compileTrust(trust)),
    });
  });
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return async (headers: Record<string, string>) =>
    (await (await fetch(base, { headers })).json()) as {
      ip: string;
      protocol: string;
      secure: boolean;
      source: string;
    };
}

describe('trusting proxies', () => {
  it('behind one proxy, takes the address and scheme it added, never what the client wrote before it', async () => {
    const ask = await echo(1);
    // A client that forges an address and a scheme; the proxy appends the real ones.
    const forged = await ask({
      'X-Forwarded-For': '192.0.2.66, 203.0.113.1',
      'X-Forwarded-Proto': 'https, http',
    });
    expect(forged).toEqual({ ip: '203.0.113.1', protocol: 'http', secure: false, source: '203.0.113.1' });
    // A proxy that replaces the scheme (nginx's proxy_set_header) leaves one value: its own.
    const honest = await ask({ 'X-Forwarded-For': '203.0.113.1', 'X-Forwarded-Proto': 'https' });
    expect(honest).toEqual({ ip: '203.0.113.1', protocol: 'https', secure: true, source: '203.0.113.1' });
    // Something that is no scheme is not believed.
    expect((await ask({ 'X-Forwarded-Proto': 'gopher' })).protocol).toBe('http');
  });

  it('behind two proxies, takes the entries of the outer one', async () => {
    const ask = await echo(2);
    const answer = await ask({
      'X-Forwarded-For': '192.0.2.66, 198.51.100.7, 10.0.0.2',
      'X-Forwarded-Proto': 'http, https, http',
    });
    expect(answer).toEqual({ ip: '198.51.100.7', protocol: 'https', secure: true, source: '198.51.100.7' });
  });

  it('without a proxy, believes no header at all', async () => {
    const ask = await echo(0);
    const answer = await ask({ 'X-Forwarded-For': '203.0.113.1', 'X-Forwarded-Proto': 'https' });
    expect(answer).toEqual({ ip: '127.0.0.1', protocol: 'http', secure: false, source: '127.0.0.1' });
  });

  it('trusted by address: believes the balancer, and nothing from a client that reaches the app directly', async () => {
    const viaBalancer = await echo(['127.0.0.1']);
    expect(
      await viaBalancer({ 'X-Forwarded-For': '203.0.113.1:5012', 'X-Forwarded-Proto': 'https' }),
    ).toEqual({ ip: '203.0.113.1', protocol: 'https', secure: true, source: '203.0.113.1' });
    // The app's own connection is from 127.0.0.1: trust a range that does not hold it.
    const direct = await echo(['10.0.0.0/8']);
    expect(await direct({ 'X-Forwarded-For': '203.0.113.1', 'X-Forwarded-Proto': 'https' })).toEqual({
      ip: '127.0.0.1',
      protocol: 'http',
      secure: false,
      source: '127.0.0.1',
    });
  });
});
