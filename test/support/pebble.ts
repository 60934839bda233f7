import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { freePort } from './identity-app.ts';

/**
 * A real ACME server for the HTTPS tests (docs/https.md): Debian's `pebble` (the Let's Encrypt project's test CA) and
 * `pebble-challtestsrv` (its programmable DNS server), both on free loopback ports with a configuration of their own
 * in a temporary directory. Pebble resolves names through the DNS server, which answers 127.0.0.1 for every A query
 * (and no AAAA) unless told otherwise, and validates HTTP-01 on `httpPort` — the apps proxy's HTTP port. Its own
 * HTTPS certificate is a self-signed one made here with openssl (`caBundle`, what SLIPWAY_ACME_CA_BUNDLE names), and
 * it issues under a root generated at its start (`root()`). `close()` ends both processes and removes the directory.
 */
export interface TestPebble {
  directoryUrl: string;
  /** The PEM file trusted for pebble's own HTTPS. */
  caBundle: string;
  /** `127.0.0.1:<port>` of the DNS server (SLIPWAY_DNS_SERVERS). */
  dnsServer: string;
  /** Pebble's root certificate of this run (PEM), which its certificates chain to. */
  root(): Promise<string>;
  setTxt(host: string, value: string): Promise<void>;
  addA(host: string, addresses: string[]): Promise<void>;
  clearA(host: string): Promise<void>;
  close(): Promise<void>;
}

const run = promisify(execFile);
const START_TIMEOUT_MS = 20_000;

function fqdn(host: string): string {
  return host.endsWith('.') ? host : `${host}.`;
}

async function waitFor(what: string, child: ChildProcess, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what} exited with code ${String(child.exitCode)}`);
    if (await probe().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`${what} did not start within ${START_TIMEOUT_MS / 1000} s`);
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

export async function startPebble(options: { httpPort: number }): Promise<TestPebble> {
  const dir = await mkdtemp(path.join(tmpdir(), 'slipway-pebble-'));
  const children: ChildProcess[] = [];
  const close = async () => {
    await Promise.all(children.map(stop));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const caBundle = path.join(dir, 'cert.pem');
    await run('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2',
      '-keyout', path.join(dir, 'key.pem'), '-out', caBundle, '-subj', '/CN=pebble test', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ]);
    const [acmePort, managementPort, tlsPort, dnsPort, challengeManagementPort] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
    const dnsServer = `127.0.0.1:${dnsPort}`;
    const challtestsrv = spawn(
      'pebble-challtestsrv',
      ['-dns01', dnsServer, '-management', `127.0.0.1:${challengeManagementPort}`, '-http01', '', '-https01', '', '-tlsalpn01', '', '-defaultIPv4', '127.0.0.1', '-defaultIPv6', ''],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    children.push(challtestsrv);
    const manage = (endpoint: string, body: object) =>
      new Promise<void>((resolve, reject) => {
        const sent = httpRequest({ host: '127.0.0.1', port: challengeManagementPort, path: endpoint, method: 'POST', agent: false }, (response) => {
          response.resume();
          response.on('end', () => (response.statusCode === 200 ? resolve() : reject(new Error(`${endpoint} answered ${String(response.statusCode)}`))));
        });
        sent.on('error', reject);
        sent.end(JSON.stringify(body));
      });
    await waitFor('pebble-challtestsrv', challtestsrv, async () => {
      await manage('/clear-txt', { host: 'probe.test.' });
      return true;
    });

    await writeFile(
      path.join(dir, 'pebble.json'),
      JSON.stringify({
        pebble: {
          listenAddress: `127.0.0.1:${acmePort}`,
          managementListenAddress: `127.0.0.1:${managementPort}`,
          certificate: caBundle,
          privateKey: path.join(dir, 'key.pem'),
          httpPort: options.httpPort,
          tlsPort,
          ocspResponderURL: '',
          externalAccountBindingRequired: false,
        },
      }),
    );
    const pebble = spawn('pebble', ['-config', path.join(dir, 'pebble.json'), '-dnsserver', dnsServer], {
      env: { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0', PEBBLE_AUTHZREUSE: '0' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(pebble);
    let pebbleLog = '';
    pebble.stderr?.on('data', (chunk: Buffer) => (pebbleLog = (pebbleLog + chunk.toString()).slice(-4000)));
    const { readFile } = await import('node:fs/promises');
    const ca = await readFile(caBundle, 'utf8');
    const get = (port: number, pathname: string) =>
      new Promise<string>((resolve, reject) => {
        const sent = request({ host: '127.0.0.1', port, path: pathname, ca, agent: false, servername: 'localhost' }, (response) => {
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (body += chunk));
          response.on('end', () => (response.statusCode === 200 ? resolve(body) : reject(new Error(`${pathname} answered ${String(response.statusCode)}`))));
        });
        sent.on('error', reject);
        sent.end();
      });
    await waitFor(`pebble (${pebbleLog})`, pebble, async () => (await get(acmePort, '/dir')).includes('newOrder'));

    return {
      directoryUrl: `https://127.0.0.1:${acmePort}/dir`,
      caBundle,
      dnsServer,
      root: () => get(managementPort, '/roots/0'),
      setTxt: (host, value) => manage('/set-txt', { host: fqdn(host), value }),
      addA: (host, addresses) => manage('/add-a', { host: fqdn(host), addresses }),
      clearA: (host) => manage('/clear-a', { host: fqdn(host) }),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
