import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { createServer, type AddressInfo } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A real Kubernetes control plane on loopback for tests (docs/kubernetes-testing.md): etcd, kube-apiserver and, by
 * default, kube-controller-manager and kube-scheduler, version 1.20.2, built from Debian's source package by
 * scripts/kube-test-binaries.sh into a cache outside the clone. There is no node: pods are scheduled onto the fake
 * kubelet of test/support/fake-kubelet.ts (a test double) and never run.
 *
 * Each cluster has its own temp dir (certificates, token file, service-account keys, etcd data, logs) and its own
 * free loopback ports. Every process is started leading its own process group; stop() signals the groups, waits
 * for every process to exit and removes the temp dir, so the leftover-process guard finds nothing.
 */

export const KUBE_VERSION = '1.20.2';
const REPOSITORY = resolve(import.meta.dirname, '../..');
const BUILD_SCRIPT = join(REPOSITORY, 'scripts/kube-test-binaries.sh');
const run = promisify(execFile);

export interface KubeClusterOptions {
  /** Run kube-controller-manager (Deployments → ReplicaSets → pods, Jobs, garbage collection, namespace deletion). Default true. */
  controllerManager?: boolean;
  /** Run kube-scheduler, which binds pending pods to a Ready node (the fake kubelet's). Default true. */
  scheduler?: boolean;
  /** How long to wait for /readyz. Default 60 s. */
  readyTimeoutMs?: number;
}

export interface KubeCluster {
  /** A kubeconfig (YAML) for the cluster admin: token auth in group system:masters, the test CA pinned. */
  kubeconfig: string;
  /** The same kubeconfig written in the cluster's temp dir (for helm, kubectl or a child process). */
  kubeconfigPath: string;
  /** `https://127.0.0.1:<port>` */
  server: string;
  /** The admin bearer token. */
  token: string;
  /** The CA (PEM) that signed the apiserver's certificate. */
  caCertificate: string;
  /** The cluster's temp dir; its `logs/` holds each component's output. */
  dir: string;
  /** The processes the cluster started (each leads its own process group), for a test that checks they are gone. */
  processes: { name: string; pid: number }[];
  /** Ends every process the cluster started and removes its temp dir. Safe to call twice. */
  stop(): Promise<void>;
}

/** Where scripts/kube-test-binaries.sh puts the binaries (it reads the same variable). */
export function kubeBinaryDir(): string {
  return join(process.env.SLIPWAY_KUBE_CACHE ?? join(homedir(), '.cache/slipway', `kube-${KUBE_VERSION}`), 'bin');
}

const BINARIES = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] as const;

/**
 * Builds the binaries when they are missing (several minutes the first time, on a fresh machine or CI that did not
 * run the script beforehand). The script serialises concurrent runs itself, so two test files may both call this.
 */
export async function ensureKubeBinaries(): Promise<string> {
  const dir = kubeBinaryDir();
  if (BINARIES.every((name) => existsSync(join(dir, name)))) return dir;
  console.log(`kube-cluster: Kubernetes ${KUBE_VERSION} test binaries are missing in ${dir}; building them with scripts/kube-test-binaries.sh (several minutes the first time)`);
  const child = spawn('bash', [BUILD_SCRIPT], { stdio: ['ignore', 'inherit', 'inherit'] });
  const code = await new Promise<number | null>((resolveExit, reject) => {
    child.once('error', reject);
    child.once('exit', resolveExit);
  });
  if (code !== 0) throw new Error(`scripts/kube-test-binaries.sh failed (exit ${String(code)}); see its output above`);
  return dir;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolveListen);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
  return port;
}

interface Component {
  name: string;
  child: ChildProcess;
  exited: Promise<void>;
  logPath: string;
}

function logTail(path: string, lines = 30): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * Writes the CA, the apiserver's serving certificate and the service-account key pair with openssl. EC P-256 keys:
 * generating them takes milliseconds, and the apiserver accepts them for serving and for service-account tokens.
 */
async function makeCertificates(dir: string): Promise<void> {
  const days = '2';
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await run('openssl', [
    'req', '-x509', ...ec, '-keyout', join(dir, 'ca.key'), '-out', join(dir, 'ca.crt'), '-days', days,
    '-subj', '/CN=slipway-test-kubernetes-ca',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  await run('openssl', ['req', ...ec, '-keyout', join(dir, 'apiserver.key'), '-out', join(dir, 'apiserver.csr'), '-subj', '/CN=kube-apiserver']);
  // 10.96.0.1 is the `kubernetes` Service's ClusterIP in --service-cluster-ip-range; the names are its in-cluster DNS.
  writeFileSync(
    join(dir, 'apiserver.ext'),
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      'subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local',
      '',
    ].join('\n'),
  );
  await run('openssl', [
    'x509', '-req', '-in', join(dir, 'apiserver.csr'), '-CA', join(dir, 'ca.crt'), '-CAkey', join(dir, 'ca.key'), '-CAcreateserial',
    '-days', days, '-extfile', join(dir, 'apiserver.ext'), '-out', join(dir, 'apiserver.crt'),
  ]);
  await run('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', join(dir, 'sa.key')]);
  await run('openssl', ['ec', '-in', join(dir, 'sa.key'), '-pubout', '-out', join(dir, 'sa.pub')]);
}

function kubeconfigYaml(server: string, caCertificate: string, user: string, token: string): string {
  const ca = Buffer.from(caCertificate).toString('base64');
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: slipway-test',
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority-data: ${ca}`,
    'users:',
    `- name: ${user}`,
    '  user:',
    `    token: ${token}`,
    'contexts:',
    '- name: slipway-test',
    '  context:',
    '    cluster: slipway-test',
    `    user: ${user}`,
    'current-context: slipway-test',
    '',
  ].join('\n');
}

/** GET a path of the apiserver; resolves with the status code and body (status 0 when nothing answers yet). */
function fetchPath(server: string, path: string, token: string, ca: string): Promise<{ status: number; body: string }> {
  return new Promise((resolveResponse) => {
    const req = request(`${server}${path}`, { ca, headers: { authorization: `Bearer ${token}` }, timeout: 2_000 }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('end', () => resolveResponse({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      response.once('error', () => resolveResponse({ status: 0, body: '' }));
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolveResponse({ status: 0, body: '' }));
    req.end();
  });
}

async function probe(server: string, path: string, token: string, ca: string): Promise<number> {
  return (await fetchPath(server, path, token, ca)).status;
}

/** The body of a 200 answer, else undefined. */
async function get(server: string, path: string, token: string, ca: string): Promise<string | undefined> {
  const { status, body } = await fetchPath(server, path, token, ca);
  return status === 200 ? body : undefined;
}

async function stopComponent(component: Component, graceMs: number): Promise<void> {
  const { child } = component;
  const signalGroup = (signal: NodeJS.Signals): void => {
    if (child.pid === undefined) return;
    try {
      // Negative pid: the whole process group the component leads (detached), in case it started children.
      process.kill(-child.pid, signal);
    } catch {
      // The group is gone already.
    }
  };
  signalGroup('SIGTERM');
  const ended = await Promise.race([component.exited.then(() => true), sleep(graceMs).then(() => false)]);
  if (!ended) signalGroup('SIGKILL');
  await component.exited;
  // A child of the component that outlived it would still hold the group: end it too.
  signalGroup('SIGKILL');
}

export async function startKubeCluster(options: KubeClusterOptions = {}): Promise<KubeCluster> {
  const binDir = await ensureKubeBinaries();
  const dir = mkdtempSync(join(tmpdir(), 'slipway-kube-'));
  const components: Component[] = [];
  let stopped = false;

  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    // Clients first, etcd last: the apiserver drains its watches on SIGTERM, and the controllers need the apiserver to exit cleanly.
    for (const component of [...components].reverse()) await stopComponent(component, 10_000);
    rmSync(dir, { recursive: true, force: true });
  };

  const startComponent = (name: string, args: string[]): Component => {
    const logPath = join(dir, 'logs', `${name}.log`);
    const fd = openSync(logPath, 'a');
    const child = spawn(join(binDir, name), args, { cwd: dir, detached: true, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    const exited = new Promise<void>((resolveExit) => {
      if (child.exitCode !== null || child.signalCode !== null) resolveExit();
      child.once('exit', () => resolveExit());
      child.once('error', () => resolveExit());
    });
    const component = { name, child, exited, logPath };
    components.push(component);
    return component;
  };

  try {
    mkdirSync(join(dir, 'logs'));
    await makeCertificates(dir);
    const caCertificate = readFileSync(join(dir, 'ca.crt'), 'utf8');
    const token = randomBytes(24).toString('hex');
    const controllerToken = randomBytes(24).toString('hex');
    const schedulerToken = randomBytes(24).toString('hex');
    // Static token auth: the admin in system:masters, and the controller manager and scheduler under the user names
    // that the apiserver's bootstrap RBAC already binds to their roles, as a kubeadm cluster has them.
    writeFileSync(
      join(dir, 'tokens.csv'),
      [
        `${token},slipway-test-admin,slipway-test-admin,"system:masters"`,
        `${controllerToken},system:kube-controller-manager,system:kube-controller-manager`,
        `${schedulerToken},system:kube-scheduler,system:kube-scheduler`,
        '',
      ].join('\n'),
    );
    const [etcdPort, etcdPeerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
    const server = `https://127.0.0.1:${apiPort}`;
    const kubeconfig = kubeconfigYaml(server, caCertificate, 'slipway-test-admin', token);
    const kubeconfigPath = join(dir, 'admin.kubeconfig');
    writeFileSync(kubeconfigPath, kubeconfig, { mode: 0o600 });
    writeFileSync(join(dir, 'controller-manager.kubeconfig'), kubeconfigYaml(server, caCertificate, 'system:kube-controller-manager', controllerToken), { mode: 0o600 });
    writeFileSync(join(dir, 'scheduler.kubeconfig'), kubeconfigYaml(server, caCertificate, 'system:kube-scheduler', schedulerToken), { mode: 0o600 });

    const etcdClient = `http://127.0.0.1:${etcdPort}`;
    const etcdPeer = `http://127.0.0.1:${etcdPeerPort}`;
    startComponent('etcd', [
      '--name=slipway-test',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=${etcdClient}`,
      `--advertise-client-urls=${etcdClient}`,
      `--listen-peer-urls=${etcdPeer}`,
      `--initial-advertise-peer-urls=${etcdPeer}`,
      `--initial-cluster=slipway-test=${etcdPeer}`,
      '--initial-cluster-state=new',
      '--log-level=warn',
    ]);
    const apiserver = startComponent('kube-apiserver', [
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      '--insecure-port=0',
      `--etcd-servers=${etcdClient}`,
      `--tls-cert-file=${join(dir, 'apiserver.crt')}`,
      `--tls-private-key-file=${join(dir, 'apiserver.key')}`,
      `--client-ca-file=${join(dir, 'ca.crt')}`,
      `--token-auth-file=${join(dir, 'tokens.csv')}`,
      '--authorization-mode=Node,RBAC',
      `--service-account-key-file=${join(dir, 'sa.pub')}`,
      `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      '--service-cluster-ip-range=10.96.0.0/24',
      '--allow-privileged=true',
      // The fake kubelet has only an InternalIP, and serves a self-signed certificate the apiserver does not check
      // (no --kubelet-certificate-authority), as a kubelet with a self-signed serving certificate.
      '--kubelet-preferred-address-types=InternalIP',
      '--profiling=false',
      '--v=1',
    ]);

    const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
    const deadline = Date.now() + readyTimeoutMs;
    for (;;) {
      const status = await probe(server, '/readyz', token, caCertificate);
      if (status === 200) break;
      const dead = components.find((component) => component.child.exitCode !== null || component.child.signalCode !== null);
      if (dead !== undefined) throw new Error(`${dead.name} exited while the cluster was starting:\n${logTail(dead.logPath)}`);
      if (Date.now() > deadline) throw new Error(`kube-apiserver not ready after ${readyTimeoutMs} ms (last /readyz: ${status}):\n${logTail(apiserver.logPath)}`);
      await sleep(250);
    }

    if (options.controllerManager ?? true) {
      startComponent('kube-controller-manager', [
        `--kubeconfig=${join(dir, 'controller-manager.kubeconfig')}`,
        '--leader-elect=false',
        '--port=0',
        '--secure-port=0',
        // Each controller acts as its own service account, as kubeadm runs it; the tokens controller signs their
        // tokens (and every namespace's default service account's, which pods need) with the key the apiserver checks.
        '--use-service-account-credentials=true',
        `--service-account-private-key-file=${join(dir, 'sa.key')}`,
        `--root-ca-file=${join(dir, 'ca.crt')}`,
        // No pod CIDRs to allocate and no CSR signing in a test.
        '--controllers=*,-nodeipam,-csrsigning',
        '--v=1',
      ]);
    }
    if (options.scheduler ?? true) {
      startComponent('kube-scheduler', [
        `--kubeconfig=${join(dir, 'scheduler.kubeconfig')}`,
        '--leader-elect=false',
        '--port=0',
        '--secure-port=0',
        '--v=1',
      ]);
    }

    if (options.controllerManager ?? true) {
      // Ready means the controllers work too: the default service account, with the token secret pods mount, is
      // made by two of them. Until then pod creation fails in admission and the ReplicaSet controller backs off, which
      // made the first rollout of a run seconds slower than the others.
      for (;;) {
        const body = await get(server, '/api/v1/namespaces/default/serviceaccounts/default', token, caCertificate);
        const account = body === undefined ? undefined : (JSON.parse(body) as { secrets?: unknown[] });
        if ((account?.secrets?.length ?? 0) > 0) break;
        const dead = components.find((component) => component.child.exitCode !== null || component.child.signalCode !== null);
        if (dead !== undefined) throw new Error(`${dead.name} exited while the cluster was starting:\n${logTail(dead.logPath)}`);
        if (Date.now() > deadline) throw new Error(`kube-controller-manager made no default service account in ${readyTimeoutMs} ms:\n${logTail(join(dir, 'logs/kube-controller-manager.log'))}`);
        await sleep(250);
      }
    }
    const processes = components.flatMap((component) => (component.child.pid === undefined ? [] : [{ name: component.name, pid: component.child.pid }]));
    return { kubeconfig, kubeconfigPath, server, token, caCertificate, dir, processes, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
