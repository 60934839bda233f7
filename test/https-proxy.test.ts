import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { connect as netConnect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AppsProxyTlsLink, startAppsProxy, type AppsProxy } from '../src/engine/local/apps-proxy.client.ts';
import { appsProxyPidPath, appsProxySocketPath, readJsonLines, writeJsonLine } from '../src/engine/local/apps-proxy.protocol.ts';
import { slipwayCommandPath } from '../src/engine/local/apps-proxy.spawn.ts';
import { freePort } from './support/identity-app.ts';
import { killProcessesUnder } from './support/sample-apps.ts';
import { httpRequestTo, httpsGet } from './support/tls-client.ts';

/**
 * The apps proxy process's HTTPS (docs/https.md), without a CA: self-signed certificates made with openssl stand for
 * issued ones. The certificates module's connection (AppsProxyTlsLink) opens the HTTPS port and sends certificates
 * and HTTP-01 answers; the proxy picks the certificate by SNI, answers challenges before redirecting plain HTTP, and
 * keeps serving HTTPS — same port, same certificates — when it hands over to a successor (an upgrade) and when it is
 * killed and its agent starts it again (the link sends everything again).
 */

const run = promisify(execFile);

interface Pair {
  chain: string;
  key: string;
}

async function selfSigned(dir: string, hostname: string): Promise<Pair> {
  const key = path.join(dir, `${hostname}.key`);
  const cert = path.join(dir, `${hostname}.pem`);
  await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2', '-keyout', key, '-out', cert, '-subj', `/CN=${hostname}`, '-addext', `subjectAltName=DNS:${hostname}`]);
  return { chain: await readFile(cert, 'utf8'), key: await readFile(key, 'utf8') };
}

function handshake(port: number, servername: string, ca: string): Promise<{ authorized: boolean; subject: string }> {
  return new Promise((resolve, reject) => {
    const socket: TLSSocket = tlsConnect({ host: '127.0.0.1', port, servername, ca, rejectUnauthorized: false }, () => {
      const subject = socket.getPeerX509Certificate()?.subject ?? '';
      resolve({ authorized: socket.authorized, subject });
      socket.destroy();
    });
    socket.once('error', reject);
  });
}

/** One request over a control connection of its own (what a test can ask the proxy directly). */
function control(stateDir: string, command: Record<string, unknown>): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(appsProxySocketPath(stateDir));
    socket.once('error', reject);
    readJsonLines(socket, (message) => {
      if (message.type === 'hello') writeJsonLine(socket, { id: 1, ...command });
      else if (message.type === 'done' && message.id === 1) {
        socket.end();
        resolve(message);
      }
    });
  });
}

/** SLIPWAY_APPS_HSTS as the server passes it on. */
const HSTS = 'max-age=600; includeSubDomains';

describe('the apps proxy serves HTTPS', () => {
  let dir: string;
  let stateDir: string;
  let agent: AppsProxy;
  let link: AppsProxyTlsLink;
  let service: HttpServer;
  let shop: Pair;
  let blog: Pair;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'slipway-https-proxy-'));
    stateDir = path.join(dir, 'agent');
    await mkdir(stateDir, { mode: 0o700 });
    [shop, blog] = await Promise.all([selfSigned(dir, 'shop.example.com'), selfSigned(dir, 'blog.example.com')]);
    service = createHttpServer((req, res) => {
      // A service that sends its own Strict-Transport-Security header keeps it.
      if (req.url === '/own-hsts') res.setHeader('strict-transport-security', 'max-age=5');
      res.end(`${req.headers.host ?? ''} ${String(req.headers['x-forwarded-proto'])}`);
    });
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    agent = await startAppsProxy({ stateDir, host: '127.0.0.1', port: 0, onTrouble: () => undefined });
    agent.setRoute('shop', { hostnames: ['shop.example.com', 'blog.example.com'], target: { host: '127.0.0.1', port: (service.address() as AddressInfo).port } });
    await agent.applied();
    link = new AppsProxyTlsLink({ stateDir, host: '127.0.0.1', port: await freePort(), hsts: HSTS, onTrouble: () => undefined });
    await link.start();
  }, 60_000);

  afterAll(async () => {
    await link?.close();
    await agent?.shutdown();
    await new Promise<void>((resolve) => (service === undefined ? resolve() : service.close(() => resolve())));
    if (dir !== undefined) {
      await killProcessesUnder(dir);
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('picks the certificate by SNI, answers ACME challenges and redirects plain HTTP for names with a certificate', async () => {
    const https = link.httpsAddress?.port ?? 0;
    expect(https).toBeGreaterThan(0);
    await link.setCertificates([{ hostnames: ['shop.example.com'], ...shop }]);
    expect(await handshake(https, 'shop.example.com', shop.chain)).toEqual({ authorized: true, subject: 'CN=shop.example.com' });
    await expect(handshake(https, 'blog.example.com', blog.chain)).rejects.toThrow();
    expect(await httpsGet(https, 'shop.example.com', shop.chain)).toMatchObject({ status: 200, body: 'shop.example.com https', hsts: HSTS });
    expect((await httpsGet(https, 'shop.example.com', shop.chain, '/own-hsts')).hsts).toBe('max-age=5');

    const apps = agent.address.port;
    await link.setChallenge('token-1', 'token-1.thumbprint');
    expect(await httpRequestTo(apps, 'shop.example.com', '/.well-known/acme-challenge/token-1')).toMatchObject({ status: 200, body: 'token-1.thumbprint' });
    expect(await httpRequestTo(apps, 'shop.example.com', '/x?y=1')).toMatchObject({ status: 301, location: `https://shop.example.com:${https}/x?y=1` });
    expect(await httpRequestTo(apps, 'shop.example.com', '/form', 'POST')).toMatchObject({ status: 308 });
    // No certificate for blog yet: plain HTTP serves it.
    expect(await httpRequestTo(apps, 'blog.example.com', '/')).toMatchObject({ status: 200, body: 'blog.example.com http', hsts: undefined });
    await link.setChallenge('token-1', undefined);
    // The challenge path is never redirected (a CA follows redirects, but need not): unanswered, it reaches the service.
    expect(await httpRequestTo(apps, 'shop.example.com', '/.well-known/acme-challenge/token-1')).toMatchObject({ status: 200, body: 'shop.example.com http' });

    // A new set replaces the old one for the next handshakes.
    await link.setCertificates([{ hostnames: ['shop.example.com'], ...shop }, { hostnames: ['blog.example.com'], ...blog }]);
    expect(await handshake(https, 'blog.example.com', blog.chain)).toEqual({ authorized: true, subject: 'CN=blog.example.com' });

    // A service that turned network.ingress.force_ssl_redirect off is served over plain HTTP as well as HTTPS.
    const target = { host: '127.0.0.1', port: (service.address() as AddressInfo).port };
    agent.setRoute('shop', { hostnames: ['shop.example.com', 'blog.example.com'], target, httpsRedirect: false });
    await agent.applied();
    expect(await httpRequestTo(apps, 'shop.example.com', '/x')).toMatchObject({ status: 200, body: 'shop.example.com http' });
    expect(await httpsGet(https, 'shop.example.com', shop.chain)).toMatchObject({ status: 200, body: 'shop.example.com https' });
    agent.setRoute('shop', { hostnames: ['shop.example.com', 'blog.example.com'], target });
    await agent.applied();
    expect(await httpRequestTo(apps, 'shop.example.com', '/x')).toMatchObject({ status: 301 });
  });

  it('keeps HTTPS on the same port through a handover and through a restart of the proxy process', async () => {
    const https = link.httpsAddress?.port ?? 0;
    await link.setChallenge('token-2', 'token-2.thumbprint');
    const before = (await readFile(appsProxyPidPath(stateDir), 'utf8')).trim();
    const handedOver = await control(stateDir, { type: 'handover', execPath: process.execPath, command: slipwayCommandPath() });
    expect(handedOver.error).toBeUndefined();
    // The successor serves the same socket with the same certificates and challenges, before anyone sends them again.
    await vi.waitFor(async () => expect((await readFile(appsProxyPidPath(stateDir), 'utf8')).trim()).not.toBe(before), { timeout: 20_000, interval: 100 });
    expect(await handshake(https, 'shop.example.com', shop.chain)).toEqual({ authorized: true, subject: 'CN=shop.example.com' });
    expect((await httpsGet(https, 'shop.example.com', shop.chain)).hsts).toBe(HSTS);
    expect(await httpRequestTo(agent.address.port, 'shop.example.com', '/.well-known/acme-challenge/token-2')).toMatchObject({ status: 200, body: 'token-2.thumbprint' });
    const successor = Number((await readFile(appsProxyPidPath(stateDir), 'utf8')).trim());

    // Killed: its agent starts it again, the link reconnects and sends the HTTPS port, certificates and challenges again.
    process.kill(successor, 'SIGKILL');
    await vi.waitFor(
      async () => {
        const pid = Number((await readFile(appsProxyPidPath(stateDir), 'utf8')).trim());
        expect(pid).not.toBe(successor);
        expect(await handshake(https, 'blog.example.com', blog.chain)).toEqual({ authorized: true, subject: 'CN=blog.example.com' });
      },
      { timeout: 30_000, interval: 200 },
    );
    expect(await httpRequestTo(agent.address.port, 'shop.example.com', '/.well-known/acme-challenge/token-2')).toMatchObject({ status: 200, body: 'token-2.thumbprint' });
  }, 60_000);
});
