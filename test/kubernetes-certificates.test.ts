import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { V1Ingress, V1Secret } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { certificateStateOf, hostnameCertificates, secretCertificateStateOf, startCertificateReports, type CertManagerCertificate } from '../src/engine/kubernetes/kubernetes-certificates.ts';
import { namespaceOf } from '../src/engine/kubernetes/kubernetes-names.ts';
import { AGENT_CERTIFICATE_ERROR_MAX, type AgentCertificateReport } from '../src/protocol/agent-protocol.ts';
import { clusterWithEnrollmentToken, enrolledCluster } from './support/agent-cluster.ts';
import { startCertManagerStandIn, type CertManagerStandIn } from './support/cert-manager-stand-in.ts';
import { startKubeWorld, type KubeWorld } from './support/kube-world.ts';
import { killProcessesUnder } from './support/sample-apps.ts';
import { spawnSlipway, waitForOutput } from './support/slipway-process.ts';
import { describeEachDatabase, uniqueName, type TestApp, type TestUser } from './support/test-app.ts';

/**
 * Certificate readiness on Kubernetes (docs/kubernetes.md, "Ingress and HTTPS"; docs/https.md, "Kubernetes
 * clusters"): the agent reads cert-manager's Certificates of Slipway's Ingresses and reports each hostname's state,
 * which the custom domains of the cluster's services show. Against a real control plane (test/support/kube-world.ts);
 * cert-manager cannot run here, and its Certificate kind cannot be a CRD of the test apiserver (it crashes on custom
 * objects): test/support/cert-manager-stand-in.ts, a STAND-IN in front of the apiserver, serves the kind, and the
 * tests play cert-manager's part by writing the Certificates and their status.
 */

const DEPLOY_TIMEOUT_MS = 120_000;
const NOT_AFTER = '2027-02-24T12:00:00Z';
const ready = (status: 'True' | 'False', reason: string, message: string) => ({ type: 'Ready', status, reason, message });

function certificate(status: CertManagerCertificate['status'], dnsNames = ['shop.example.com']): CertManagerCertificate {
  return { metadata: { name: 'web-tls', namespace: 'ns' }, spec: { secretName: 'web-tls', dnsNames }, ...(status === undefined ? {} : { status }) };
}

describe('the state of a hostname from its cert-manager Certificate', () => {
  it('is PENDING without a Certificate, without a Ready condition, or while it issues', () => {
    const pending = { status: 'PENDING', error: null, expires_at: null };
    expect(certificateStateOf(undefined, 'shop.example.com')).toEqual(pending);
    expect(certificateStateOf(certificate(undefined), 'shop.example.com')).toEqual(pending);
    expect(certificateStateOf(certificate({ conditions: [] }), 'shop.example.com')).toEqual(pending);
    for (const reason of ['Issuing', 'InProgress', 'DoesNotExist', 'Pending']) {
      expect(certificateStateOf(certificate({ conditions: [ready('False', reason, 'Issuing certificate as Secret does not exist')] }), 'shop.example.com')).toEqual(pending);
    }
  });

  it('is ISSUED when Ready, expiring at notAfter; a renewal under way keeps it issued', () => {
    const issued = { status: 'ISSUED', error: null, expires_at: '2027-02-24T12:00:00.000Z' };
    expect(certificateStateOf(certificate({ conditions: [ready('True', 'Ready', 'Certificate is up to date and has not expired')], notAfter: NOT_AFTER }), 'shop.example.com')).toEqual(issued);
    const renewing = { conditions: [ready('True', 'Ready', 'ok'), { type: 'Issuing', status: 'True', reason: 'Renewing', message: 'Renewing certificate as renewal was scheduled' }], notAfter: NOT_AFTER };
    expect(certificateStateOf(certificate(renewing), 'shop.example.com')).toEqual(issued);
    expect(certificateStateOf(certificate({ conditions: [ready('True', 'Ready', 'ok')], notAfter: 'not a time' }), 'shop.example.com')).toEqual({ ...issued, expires_at: null });
  });

  it('is ERROR with the message when Ready is False for a failure, or the last request failed', () => {
    expect(certificateStateOf(certificate({ conditions: [ready('False', 'Failed', '  ACME order was refused: rateLimited  ')] }), 'shop.example.com')).toEqual({
      status: 'ERROR',
      error: 'ACME order was refused: rateLimited',
      expires_at: null,
    });
    const failedRequest = {
      conditions: [ready('False', 'DoesNotExist', 'Issuing certificate as Secret does not exist'), { type: 'Issuing', status: 'False', reason: 'Failed', message: 'The certificate request has failed to complete and will be retried' }],
    };
    expect(certificateStateOf(certificate(failedRequest), 'shop.example.com')).toMatchObject({ status: 'ERROR', error: 'The certificate request has failed to complete and will be retried' });
    const long = certificateStateOf(certificate({ conditions: [ready('False', 'Failed', 'x'.repeat(5000))] }), 'shop.example.com');
    expect(long.error).toHaveLength(AGENT_CERTIFICATE_ERROR_MAX);
    expect(long.error?.endsWith('…')).toBe(true);
  });

  it('is PENDING for a hostname the Certificate does not name yet', () => {
    const issued = certificate({ conditions: [ready('True', 'Ready', 'ok')], notAfter: NOT_AFTER }, ['web.apps.example.com']);
    expect(certificateStateOf(issued, 'shop.example.com').status).toBe('PENDING');
    expect(certificateStateOf(issued, 'web.apps.example.com').status).toBe('ISSUED');
  });

  it("maps every hostname of an Ingress's TLS entry to the Certificate of its namespace filling the entry's Secret", () => {
    const ingress = (namespace: string, hosts: string[]): V1Ingress => ({ metadata: { name: 'web', namespace }, spec: { tls: [{ hosts, secretName: 'web-tls' }] } });
    const issued = certificate({ conditions: [ready('True', 'Ready', 'ok')], notAfter: NOT_AFTER }, ['shop.example.com', 'web.apps.example.com']);
    const states = hostnameCertificates([ingress('ns', ['Shop.example.com', 'web.apps.example.com']), ingress('other', ['other.example.com']), { metadata: { name: 'plain', namespace: 'ns' }, spec: {} }], { kind: 'cert-manager', certificates: [issued] });
    expect(Object.fromEntries([...states].map(([hostname, state]) => [hostname, state.status]))).toEqual({
      'shop.example.com': 'ISSUED',
      'web.apps.example.com': 'ISSUED',
      'other.example.com': 'PENDING',
    });
  });
});

/** A self-signed leaf naming `hostnames`, valid for two days from now, made by openssl; its PEM. */
async function selfSignedCertificate(hostnames: string[]): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'slipway-tls-secret-'));
  try {
    const [key, cert] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')];
    const subjectAltName = hostnames.map((hostname) => `DNS:${hostname}`).join(',');
    await promisify(execFile)('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2', '-keyout', key, '-out', cert, '-subj', `/CN=${hostnames[0] ?? 'none'}`, '-addext', `subjectAltName=${subjectAltName}`]);
    return await readFile(cert, 'utf8');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function tlsSecret(pem: string | undefined): V1Secret {
  return { metadata: { name: 'web-tls', namespace: 'ns' }, type: 'kubernetes.io/tls', data: pem === undefined ? {} : { 'tls.crt': Buffer.from(pem).toString('base64') } };
}

describe('the state of a hostname from its TLS Secret (no cert-manager)', () => {
  const DAY = 24 * 3600_000;

  it('is PENDING without the Secret or its tls.crt; ISSUED with the leaf\'s notAfter when it names the host and is valid', async () => {
    const pem = await selfSignedCertificate(['shop.example.com']);
    const now = new Date();
    expect(secretCertificateStateOf(undefined, 'shop.example.com', now)).toEqual({ status: 'PENDING', error: null, expires_at: null });
    expect(secretCertificateStateOf(tlsSecret(undefined), 'shop.example.com', now)).toEqual({ status: 'PENDING', error: null, expires_at: null });
    const issued = secretCertificateStateOf(tlsSecret(pem), 'shop.example.com', now);
    expect(issued.status).toBe('ISSUED');
    expect(issued.error).toBeNull();
    const expiresIn = new Date(issued.expires_at ?? 0).getTime() - now.getTime();
    expect(expiresIn).toBeGreaterThan(DAY);
    expect(expiresIn).toBeLessThanOrEqual(2 * DAY + 60_000);
  });

  it('is ERROR, saying why, for a leaf that names another host, has expired, is not valid yet, or is not a certificate', async () => {
    const pem = await selfSignedCertificate(['shop.example.com']);
    const now = new Date();
    const other = secretCertificateStateOf(tlsSecret(pem), 'other.example.com', now);
    expect(other).toMatchObject({ status: 'ERROR', error: 'the certificate in Secret ns/web-tls does not name other.example.com' });
    const expired = secretCertificateStateOf(tlsSecret(pem), 'shop.example.com', new Date(now.getTime() + 3 * DAY));
    expect(expired.status).toBe('ERROR');
    expect(expired.error).toMatch(/^the certificate in Secret ns\/web-tls expired at \d{4}-/);
    expect(expired.expires_at).not.toBeNull();
    expect(secretCertificateStateOf(tlsSecret(pem), 'shop.example.com', new Date(now.getTime() - DAY)).error).toMatch(/is not valid before/);
    expect(secretCertificateStateOf(tlsSecret('not a certificate'), 'shop.example.com', now)).toEqual({
      status: 'ERROR',
      error: 'Secret ns/web-tls holds no readable certificate in tls.crt',
      expires_at: null,
    });
  });
});

let world: KubeWorld | undefined;
let certManager: CertManagerStandIn | undefined;
let standInDir = '';

beforeAll(async () => {
  world = await startKubeWorld();
  standInDir = await mkdtemp(path.join(tmpdir(), 'slipway-cert-manager-'));
  certManager = await startCertManagerStandIn(world.kube.kubeconfig, standInDir);
}, 20 * 60_000);

afterAll(async () => {
  await certManager?.stop();
  await world?.stop();
  if (standInDir !== '') await rm(standInDir, { recursive: true, force: true });
});

function stand(): CertManagerStandIn {
  if (certManager === undefined) throw new Error('the cert-manager stand-in did not start');
  return certManager;
}

function kube(): KubeWorld {
  if (world === undefined) throw new Error('the Kubernetes cluster did not start');
  return world;
}

describe('the agent reporting certificates against the apiserver', () => {
  const namespace = 'slipway-certificates-test';
  const hosts = ['cert-a.example.com', 'cert-b.example.com'];

  beforeAll(async () => {
    const { core, networking } = kube();
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await networking.createNamespacedIngress({
      namespace,
      body: {
        metadata: { name: 'web', namespace, labels: { 'app.kubernetes.io/managed-by': 'slipway' }, annotations: { 'cert-manager.io/cluster-issuer': 'letsencrypt' } },
        spec: {
          tls: [{ hosts, secretName: 'web-tls' }],
          rules: hosts.map((host) => ({ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } })),
        },
      },
    });
  });

  it("reads the TLS Secrets on a cluster without the Certificate CRD (saying so once), then cert-manager's Certificates once it is installed", { timeout: 60_000 }, async () => {
    const { core } = kube();
    const reports: AgentCertificateReport[] = [];
    const troubles: string[] = [];
    const reporter = startCertificateReports({ config: stand().config, report: async (report) => void reports.push(report), onTrouble: (message) => troubles.push(message), periodMs: 100 });
    try {
      await vi.waitFor(() => expect(reports.length).toBeGreaterThan(0), { timeout: 10_000, interval: 50 });
      expect(reports[0], 'no Secret yet').toEqual({ certificates: hosts.map((hostname) => ({ hostname, status: 'PENDING', error: null, expires_at: null })) });
      expect(troubles).toEqual([expect.stringContaining("read from their Ingresses' TLS Secrets")]);

      // Something other than cert-manager fills the Secret, with a certificate naming only the first host.
      const pem = await selfSignedCertificate([hosts[0] ?? '']);
      await core.createNamespacedSecret({ namespace, body: { metadata: { name: 'web-tls', namespace }, type: 'kubernetes.io/tls', data: { 'tls.crt': Buffer.from(pem).toString('base64'), 'tls.key': '' } } });
      await vi.waitFor(() => expect(reports).toHaveLength(2), { timeout: 10_000, interval: 50 });
      const [first, second] = reports[1]?.certificates ?? [];
      expect(first).toMatchObject({ hostname: hosts[0], status: 'ISSUED', error: null });
      expect(Date.parse(first?.expires_at ?? '')).toBeGreaterThan(Date.now());
      expect(second).toMatchObject({ hostname: hosts[1], status: 'ERROR', error: `the certificate in Secret ${namespace}/web-tls does not name ${hosts[1]}` });

      stand().install();
      // cert-manager has made no Certificate for the Secret yet: its view wins, PENDING.
      await vi.waitFor(() => expect(reports).toHaveLength(3), { timeout: 30_000, interval: 100 });
      expect(reports[2]).toEqual({ certificates: hosts.map((hostname) => ({ hostname, status: 'PENDING', error: null, expires_at: null })) });
      expect(troubles).toHaveLength(1);
      await core.deleteNamespacedSecret({ namespace, name: 'web-tls' });
    } finally {
      await reporter.stop();
    }
  });

  it('sends only changes, everything again after a failed report (a reconnect), and hostnames no longer certified as gone', { timeout: 60_000 }, async () => {
    const { networking } = kube();
    const { config } = stand();
    const reports: AgentCertificateReport[] = [];
    let failNext = false;
    const reporter = startCertificateReports({
      config,
      report: async (report) => {
        if (failNext) {
          failNext = false;
          throw new Error('the control plane cannot be reached');
        }
        reports.push(report);
      },
      onTrouble: () => undefined,
      periodMs: 100,
    });
    try {
      await vi.waitFor(() => expect(reports).toHaveLength(1), { timeout: 10_000, interval: 50 });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(reports, 'nothing changed: nothing sent').toHaveLength(1);

      stand().createCertificate(namespace, 'web-tls', hosts);
      stand().writeStatus(namespace, 'web-tls', { conditions: [ready('True', 'Ready', 'Certificate is up to date and has not expired')], notAfter: NOT_AFTER });
      await vi.waitFor(() => expect(reports).toHaveLength(2), { timeout: 10_000, interval: 50 });
      expect(reports[1]?.certificates.map((state) => state.status)).toEqual(['ISSUED', 'ISSUED']);

      failNext = true;
      stand().writeStatus(namespace, 'web-tls', { conditions: [ready('True', 'Ready', 'ok')], notAfter: '2027-05-25T12:00:00Z' });
      // The failed report is followed by one of everything.
      await vi.waitFor(() => expect(reports).toHaveLength(3), { timeout: 10_000, interval: 50 });
      expect(reports[2]?.certificates).toEqual(hosts.map((hostname) => ({ hostname, status: 'ISSUED', error: null, expires_at: '2027-05-25T12:00:00.000Z' })));

      await networking.patchNamespacedIngress(
        { namespace, name: 'web', body: [{ op: 'replace', path: '/spec/tls/0/hosts', value: [hosts[0]] }] },
      );
      await vi.waitFor(() => expect(reports).toHaveLength(4), { timeout: 10_000, interval: 50 });
      expect(reports[3]).toEqual({ certificates: [], gone: [hosts[1]] });
    } finally {
      await reporter.stop();
    }
  });
});

describeEachDatabase('certificate states reported by a Kubernetes agent', (ctx) => {
  let baseUrl = '';
  const stateDirs: string[] = [];

  beforeAll(async () => {
    stand().install();
    await ctx().app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(ctx().app.server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    for (const dir of stateDirs) {
      await killProcessesUnder(dir);
      await rm(dir, { recursive: true, force: true });
    }
  });

  const caller = (owner: TestUser) => (method: 'GET' | 'POST' | 'PUT', url: string, payload?: Record<string, unknown>) =>
    ctx().call(owner.auth, { method, url, ...(payload === undefined ? {} : { payload }) });

  /** A container with a public port on the cluster, and a verified custom domain asking for a certificate. */
  async function containerWithDomain(app: TestApp, owner: TestUser, organizationId: string, clusterId: string) {
    const call = caller(owner);
    const project = (await call('POST', `/organization/${organizationId}/project`, { name: uniqueName('p') })).json<{ id: string }>().id;
    const environment = await call('POST', `/project/${project}/environment`, { name: uniqueName('certs'), cluster: clusterId, mode: 'STAGING' });
    expect(environment.statusCode, environment.body).toBe(201);
    const environmentId = environment.json<{ id: string }>().id;
    const registry = await call('POST', `/organization/${organizationId}/containerRegistry`, { name: uniqueName('registry'), kind: 'GENERIC_CR', url: 'https://registry.slipway-kube.invalid', config: { username: 'robot', password: 'pull-password-1' } });
    expect(registry.statusCode, registry.body).toBe(201);
    const created = await call('POST', `/environment/${environmentId}/container`, {
      name: 'shop',
      registry_id: registry.json<{ id: string }>().id,
      image_name: 'acme/shop',
      tag: '1.0',
      ports: [{ internal_port: 8080, publicly_accessible: true }],
      healthchecks: { readiness_probe: { type: { http: { path: '/health', port: 8080 } } } },
    });
    expect(created.statusCode, created.body).toBe(201);
    const containerId = created.json<{ id: string }>().id;
    const domain = `${uniqueName('shop').toLowerCase()}.example.com`;
    const added = await call('POST', `/container/${containerId}/customDomain`, { domain, generate_certificate: true });
    expect(added.statusCode, added.body).toBe(201);
    // Its DNS check is another suite's business (custom-domains.test.ts): verified here as a passing check leaves it.
    await app.database.db.updateTable('service_custom_domains').set({ status: 'VALIDATED' }).where('domain', '=', domain).execute();
    return { environmentId, containerId, domain };
  }

  async function domainCertificate(owner: TestUser, containerId: string) {
    const list = await caller(owner)('GET', `/container/${containerId}/customDomain`);
    expect(list.statusCode, list.body).toBe(200);
    const [first] = list.json<{ results: Array<{ certificate_status: string | null; certificate_error: string | null; certificate_expires_at: string | null }> }>().results;
    return { status: first?.certificate_status, error: first?.certificate_error, expires_at: first?.certificate_expires_at };
  }

  it(
    "shows the domain's certificate as cert-manager has it: PENDING, then ISSUED with its expiry, then ERROR with its message",
    { timeout: 4 * DEPLOY_TIMEOUT_MS },
    async () => {
      const { networking } = kube();
      const { owner, organizationId } = await ctx().signUpWithOrganization();
      const { clusterId, enrollmentToken } = await clusterWithEnrollmentToken(ctx(), organizationId, owner);
      const { environmentId, containerId, domain } = await containerWithDomain(ctx(), owner, organizationId, clusterId);
      const stateDir = await mkdtemp(path.join(tmpdir(), 'slipway-cert-agent-'));
      stateDirs.push(stateDir);
      const agent = spawnSlipway(
        ['agent', '--control-plane', baseUrl, '--state-dir', stateDir, '--enrollment-token', enrollmentToken, '--driver', 'kubernetes', '--kubeconfig', stand().kubeconfigPath, '--cert-manager-issuer', 'letsencrypt'],
        { HOME: stateDir, SLIPWAY_DATA_DIR: stateDir },
      );
      try {
        await waitForOutput(agent, /deploying onto Kubernetes v1\.20\.\d+/);
        const call = caller(owner);
        expect((await call('POST', `/container/${containerId}/deploy`, {})).statusCode).toBe(202);
        const deployed = await vi.waitFor(
          async () => {
            const state = (await call('GET', `/container/${containerId}/status`)).json<{ state: string; message: string | null }>();
            expect(state.state === 'DEPLOYED' || state.state.endsWith('_ERROR'), JSON.stringify(state)).toBe(true);
            return state;
          },
          { timeout: DEPLOY_TIMEOUT_MS, interval: 250 },
        );
        expect(deployed.state, deployed.message ?? '').toBe('DEPLOYED');
        const namespace = namespaceOf(environmentId);
        const ingress = (await networking.listNamespacedIngress({ namespace, labelSelector: `slipway.dev/service-id=${containerId}` })).items[0];
        const tls = ingress?.spec?.tls?.[0];
        expect(tls?.hosts).toContain(domain);
        const secretName = tls?.secretName ?? '';

        // cert-manager has not made the Certificate yet.
        expect(await domainCertificate(owner, containerId)).toEqual({ status: 'PENDING', error: null, expires_at: null });

        stand().createCertificate(namespace, secretName, tls?.hosts ?? []);
        stand().writeStatus(namespace, secretName, { conditions: [ready('True', 'Ready', 'Certificate is up to date and has not expired')], notAfter: NOT_AFTER });
        await vi.waitFor(async () => expect(await domainCertificate(owner, containerId)).toEqual({ status: 'ISSUED', error: null, expires_at: '2027-02-24T12:00:00.000Z' }), {
          timeout: 60_000,
          interval: 500,
        });

        const refusal = 'Failed to create Order: 429 urn:ietf:params:acme:error:rateLimited: too many certificates already issued';
        stand().writeStatus(namespace, secretName, { conditions: [ready('False', 'Failed', refusal)] });
        await vi.waitFor(async () => expect(await domainCertificate(owner, containerId)).toEqual({ status: 'ERROR', error: refusal, expires_at: null }), { timeout: 60_000, interval: 500 });
        expect(agent.printed()).not.toContain('serves no cert-manager Certificates');
      } finally {
        agent.kill('SIGTERM');
        await agent.result;
      }
    },
  );

  it("ignores what an agent reports of another cluster's, another organization's or an unknown hostname", async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const a = await enrolledCluster(ctx(), organizationId, owner);
    const b = await enrolledCluster(ctx(), organizationId, owner);
    const onB = await containerWithDomain(ctx(), owner, organizationId, b.clusterId);
    const other = await ctx().signUpWithOrganization();
    const c = await enrolledCluster(ctx(), other.organizationId, other.owner);
    const onC = await containerWithDomain(ctx(), other.owner, other.organizationId, c.clusterId);
    const agentCall = (credential: string, url: string, payload: Record<string, unknown>) =>
      ctx().call(undefined, { method: 'POST', url, headers: { authorization: `Bearer ${credential}` }, payload });
    const beat = { agent_version: '0.1.0', driver: 'kubernetes', started_at: new Date().toISOString(), cluster: { kubernetes_version: 'v1.20.2', node_count: 1, missing_permissions: [], cert_manager_issuer: 'letsencrypt' } };
    for (const credential of [a.credential, b.credential, c.credential]) expect((await agentCall(credential, '/operator/v1/heartbeat', beat)).statusCode).toBe(200);
    // Clusters that certify their own hostnames: PENDING until their agent reports.
    expect(await domainCertificate(owner, onB.containerId)).toEqual({ status: 'PENDING', error: null, expires_at: null });

    const issued = (hostname: string) => ({ hostname, status: 'ISSUED', error: null, expires_at: '2027-02-24T12:00:00Z' });
    const foreign = await agentCall(a.credential, '/operator/v1/certificates', { certificates: [issued(onB.domain), issued(onC.domain), issued('nobody.example.com')] });
    expect(foreign.statusCode, foreign.body).toBe(200);
    expect(foreign.json()).toEqual({ recorded: 0, ignored: 3 });
    expect(await domainCertificate(owner, onB.containerId)).toEqual({ status: 'PENDING', error: null, expires_at: null });
    expect(await domainCertificate(other.owner, onC.containerId)).toEqual({ status: 'PENDING', error: null, expires_at: null });
    expect(await ctx().database.db.selectFrom('agent_certificates').selectAll().where('cluster_id', '=', a.clusterId).execute()).toEqual([]);

    // Its own cluster's agent is heard; `gone` forgets the hostname again.
    const own = await agentCall(b.credential, '/operator/v1/certificates', { certificates: [issued(onB.domain.toUpperCase())] });
    expect(own.json()).toEqual({ recorded: 1, ignored: 0 });
    expect(await domainCertificate(owner, onB.containerId)).toEqual({ status: 'ISSUED', error: null, expires_at: '2027-02-24T12:00:00.000Z' });
    expect((await agentCall(b.credential, '/operator/v1/certificates', { certificates: [], gone: [onB.domain] })).json()).toEqual({ recorded: 1, ignored: 0 });
    expect(await domainCertificate(owner, onB.containerId)).toEqual({ status: 'PENDING', error: null, expires_at: null });

    // A cluster whose agent has no cert-manager issuer shows no certificate state for its domains.
    expect((await agentCall(b.credential, '/operator/v1/heartbeat', { ...beat, cluster: { ...beat.cluster, cert_manager_issuer: undefined } })).statusCode).toBe(200);
    expect(await domainCertificate(owner, onB.containerId)).toEqual({ status: null, error: null, expires_at: null });
  });

  it('refuses an invalid report with 400 and a caller without the credential with 401', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const { credential } = await enrolledCluster(ctx(), organizationId, owner);
    const post = (payload: Record<string, unknown>, headers: Record<string, string> = { authorization: `Bearer ${credential}` }) =>
      ctx().call(undefined, { method: 'POST', url: '/operator/v1/certificates', headers, payload });
    for (const payload of [
      { certificates: [{ hostname: 'a.example.com', status: 'REVOKED', error: null, expires_at: null }] },
      { certificates: [{ hostname: 'a.example.com', status: 'ISSUED', error: null, expires_at: 'tomorrow' }] },
      { certificates: [{ hostname: '', status: 'PENDING', error: null, expires_at: null }] },
      { certificates: [{ hostname: 'a.example.com', status: 'ERROR', error: 'x'.repeat(AGENT_CERTIFICATE_ERROR_MAX + 1), expires_at: null }] },
      { certificates: Array.from({ length: 501 }, (_, index) => ({ hostname: `h${index}.example.com`, status: 'PENDING', error: null, expires_at: null })) },
      { states: [] },
    ]) {
      const refused = await post(payload);
      expect(refused.statusCode, JSON.stringify(payload).slice(0, 200)).toBe(400);
      expect(refused.json()).toMatchObject({ message: expect.any(String) });
    }
    expect((await post({ certificates: [] }, {})).statusCode).toBe(401);
    expect((await post({ certificates: [] }, { authorization: 'Bearer not-a-credential' })).statusCode).toBe(401);
  });
});
