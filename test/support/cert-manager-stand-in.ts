import { writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { CertManagerCertificate } from '../../src/engine/kubernetes/kubernetes-certificates.ts';

/**
 * A STAND-IN for cert-manager, which cannot run here, and for its `Certificate` kind (cert-manager.io/v1).
 *
 * The kind cannot be a CustomResourceDefinition on the test control plane: its kube-apiserver 1.20.2, built with Go
 * 1.19 (scripts/kube-test-binaries.sh), crashes (SIGSEGV in json-iterator's map encoder, an old reflect2 under a newer
 * Go) on the first custom object it decodes. So the stand-in is a front of the apiserver: a loopback HTTP server that
 * passes every request through to the real apiserver as its admin (watches stream through), except those of the
 * `cert-manager.io` API group, which it answers itself from the Certificates the test writes — as cert-manager's
 * ingress-shim makes them (named after an Ingress's TLS Secret) and as its controller writes their status. Until
 * `install()`, the group answers 404, as on a cluster without cert-manager's CRDs.
 *
 * Point the agent at `kubeconfig` / `kubeconfigPath` rather than the apiserver's own.
 */
export interface CertManagerStandIn {
  /** An admin kubeconfig whose server is the front. */
  kubeconfig: string;
  kubeconfigPath: string;
  config: KubeConfig;
  /** cert-manager's CRDs are installed from now on: the group is served. */
  install(): void;
  /** cert-manager's ingress-shim: the Certificate of an Ingress's TLS Secret, for its hostnames. */
  createCertificate(namespace: string, secretName: string, dnsNames: string[]): void;
  /** cert-manager's controller: the Certificate's status (its conditions, its notAfter). */
  writeStatus(namespace: string, name: string, status: NonNullable<CertManagerCertificate['status']>): void;
  /** How many requests of the group were answered (a reporter that lists is seen looking). */
  requests(): number;
  stop(): Promise<void>;
}

const GROUP_PREFIX = '/apis/cert-manager.io/';

export async function startCertManagerStandIn(apiserverKubeconfig: string, dir: string): Promise<CertManagerStandIn> {
  const upstream = new KubeConfig();
  upstream.loadFromString(apiserverKubeconfig);
  const server = new URL(upstream.getCurrentCluster()?.server ?? '');
  const tls: RequestOptions = {};
  await upstream.applyToHTTPSOptions(tls);
  const certificates = new Map<string, CertManagerCertificate>();
  let installed = false;
  let served = 0;
  let version = 1;

  function json(response: ServerResponse, status: number, body: unknown): void {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  }

  function answerGroup(request: IncomingMessage, response: ServerResponse): void {
    served += 1;
    const url = new URL(request.url ?? '/', 'http://stand-in');
    if (!installed) return json(response, 404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'the server could not find the requested resource', reason: 'NotFound', code: 404 });
    const namespaced = /^\/apis\/cert-manager\.io\/v1\/namespaces\/([^/]+)\/certificates$/.exec(url.pathname);
    if (request.method === 'GET' && (url.pathname === '/apis/cert-manager.io/v1/certificates' || namespaced !== null)) {
      const items = [...certificates.values()].filter((item) => namespaced === null || item.metadata?.namespace === namespaced[1]);
      return json(response, 200, { apiVersion: 'cert-manager.io/v1', kind: 'CertificateList', metadata: { resourceVersion: String(version) }, items });
    }
    return json(response, 405, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: `the stand-in does not serve ${request.method ?? ''} ${url.pathname}`, code: 405 });
  }

  function passThrough(request: IncomingMessage, response: ServerResponse): void {
    // The caller's token is the stand-in's own; the apiserver is called as its admin.
    const headers = { ...request.headers, ...(tls.headers ?? {}), host: server.host };
    const forwarded = httpsRequest({ ...tls, hostname: server.hostname, port: server.port, path: request.url, method: request.method, headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      // A watch or a followed log may send nothing for a long time: its headers go on at once, as the apiserver's do.
      response.flushHeaders();
      answer.pipe(response);
    });
    forwarded.on('error', (error) => {
      if (!response.headersSent) json(response, 502, { kind: 'Status', status: 'Failure', message: error.message, code: 502 });
      else response.destroy(error);
    });
    response.on('close', () => forwarded.destroy());
    request.pipe(forwarded);
  }

  const front: Server = createServer((request, response) => {
    if ((request.url ?? '').startsWith(GROUP_PREFIX)) answerGroup(request, response);
    else passThrough(request, response);
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const { port } = front.address() as AddressInfo;
  const kubeconfig = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: stand-in',
    '  cluster:',
    `    server: http://127.0.0.1:${port}`,
    // Plain HTTP on loopback: client-node allows it only with verification off, there being nothing to verify.
    '    insecure-skip-tls-verify: true',
    'users:',
    '- name: admin',
    '  user:',
    '    token: stand-in',
    'contexts:',
    '- name: stand-in',
    '  context:',
    '    cluster: stand-in',
    '    user: admin',
    'current-context: stand-in',
    '',
  ].join('\n');
  const kubeconfigPath = path.join(dir, 'cert-manager-stand-in.kubeconfig');
  await writeFile(kubeconfigPath, kubeconfig, { mode: 0o600 });
  const config = new KubeConfig();
  config.loadFromString(kubeconfig);

  return {
    kubeconfig,
    kubeconfigPath,
    config,
    install() {
      installed = true;
    },
    createCertificate(namespace, secretName, dnsNames) {
      version += 1;
      certificates.set(`${namespace}/${secretName}`, {
        metadata: { name: secretName, namespace },
        spec: { secretName, dnsNames },
      });
    },
    writeStatus(namespace, name, status) {
      const current = certificates.get(`${namespace}/${name}`);
      if (current === undefined) throw new Error(`no Certificate ${namespace}/${name}`);
      version += 1;
      certificates.set(`${namespace}/${name}`, { ...current, status });
    },
    requests: () => served,
    stop: () =>
      new Promise<void>((resolve) => {
        front.closeAllConnections();
        front.close(() => resolve());
      }),
  };
}
