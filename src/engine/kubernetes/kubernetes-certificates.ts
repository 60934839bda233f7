import { X509Certificate } from 'node:crypto';
import { CoreV1Api, CustomObjectsApi, NetworkingV1Api, type KubeConfig, type V1Ingress, type V1Secret } from '@kubernetes/client-node';
import { AGENT_CERTIFICATE_ERROR_MAX, type AgentCertificateReport, type AgentCertificateState } from '../../protocol/agent-protocol.ts';
import { kubernetesErrorMessage } from './kubernetes-cluster.ts';
import { MANAGED_BY, SLIPWAY } from './kubernetes-names.ts';
import { runReportLoop } from './kubernetes-report-loop.ts';

/**
 * Where the certificates of Slipway's Ingresses stand (docs/kubernetes.md, "Ingress and HTTPS"), reported to the
 * control plane so a custom domain's `certificate_status` says it. With `--cert-manager-issuer`, each Ingress asks
 * cert-manager for a certificate of its hostnames kept in `Secret <name>-tls` (kubernetes-ingress.ts); cert-manager's
 * ingress-shim makes a `Certificate` (cert-manager.io/v1) for that Secret and writes its conditions.
 *
 * Every period (15 s by default) the agent lists Slipway's Ingresses and the cluster's Certificates — two lists, as
 * cheap as a watch's resync and with no watch to keep alive per kind — and derives each hostname's state
 * (certificateStateOf). It sends what changed since its last accepted report, in batches; everything again after it
 * starts, after a report failed (the control plane may have missed it: a reconnect), and every ten minutes, so the
 * control plane converges whatever it lost. A hostname no Ingress certifies any more is sent as `gone`.
 *
 * A cluster without cert-manager's CRD (the list answers 404) says so once, and each hostname's state is read from the
 * TLS Secret its Ingress names instead (secretCertificateStateOf): whatever filled it — another controller, an operator
 * by hand —, the certificate it holds is what the ingress controller serves.
 */

/** The part of cert-manager's Certificate read here. */
export interface CertManagerCertificate {
  metadata?: { name?: string; namespace?: string };
  spec?: { secretName?: string; dnsNames?: string[] };
  status?: {
    conditions?: Array<{ type?: string; status?: string; reason?: string; message?: string }>;
    notAfter?: string;
  };
}

export type HostnameCertificate = Omit<AgentCertificateState, 'hostname'>;

/**
 * Reasons cert-manager gives a `Ready=False` condition while it is (re)issuing, or about to: the certificate is on its
 * way, not failed. Any other reason (`Failed`, `Expired`, an issuer's own) is a failure.
 */
const ISSUING_REASONS: ReadonlySet<string> = new Set([
  'Issuing',
  'InProgress',
  'Pending',
  'DoesNotExist',
  'MissingData',
  'Renewing',
  'ManuallyTriggered',
  'Incorrect',
  'IncorrectIssuer',
  'IncorrectCertificate',
  'SecretMismatch',
]);

/** Default time between two looks at the cluster. */
const DEFAULT_PERIOD_MS = 15_000;
/** Default time between two reports of every state, whatever changed. */
const DEFAULT_FULL_REPORT_MS = 10 * 60_000;
/** The protocol's batch size (AgentCertificateReport's maxItems). */
const BATCH = 500;

function trimmed(message: string): string {
  const text = message.trim();
  return text.length <= AGENT_CERTIFICATE_ERROR_MAX ? text : `${text.slice(0, AGENT_CERTIFICATE_ERROR_MAX - 1)}…`;
}

function timestampOf(value: string | undefined): string | null {
  if (value === undefined) return null;
  const at = new Date(value);
  return Number.isNaN(at.getTime()) ? null : at.toISOString();
}

/**
 * One hostname's state from the Certificate that should cover it (undefined: cert-manager has made none yet):
 *
 * - ISSUED: `Ready=True`, expiring at `status.notAfter` (a renewal under way keeps it issued: it still serves);
 * - ERROR: `Ready=False` with a failure reason, or the last request failed (`Issuing=False` with reason `Failed`,
 *   which is how cert-manager says an order it will retry went wrong), the condition's message as the error;
 * - PENDING: no Certificate yet, no Ready condition yet, `Ready=False` while it issues, or a Certificate that does not
 *   name the hostname yet (the Ingress gained a domain cert-manager has not re-certified).
 */
export function certificateStateOf(certificate: CertManagerCertificate | undefined, hostname: string): HostnameCertificate {
  const pending: HostnameCertificate = { status: 'PENDING', error: null, expires_at: null };
  if (certificate === undefined) return pending;
  const names = certificate.spec?.dnsNames;
  if (names !== undefined && !names.some((name) => name.toLowerCase() === hostname)) return pending;
  const conditions = certificate.status?.conditions ?? [];
  const ready = conditions.find((condition) => condition.type === 'Ready');
  const expiresAt = timestampOf(certificate.status?.notAfter);
  if (ready?.status === 'True') return { status: 'ISSUED', error: null, expires_at: expiresAt };
  const issuing = conditions.find((condition) => condition.type === 'Issuing');
  if (issuing?.status === 'False' && issuing.reason === 'Failed') {
    return { status: 'ERROR', error: trimmed(issuing.message ?? 'the certificate request failed'), expires_at: expiresAt };
  }
  if (ready?.status === 'False' && ready.reason !== undefined && !ISSUING_REASONS.has(ready.reason)) {
    return { status: 'ERROR', error: trimmed(ready.message ?? ready.reason), expires_at: expiresAt };
  }
  return pending;
}

/**
 * One hostname's state from the `kubernetes.io/tls` Secret that should hold its certificate, on a cluster without
 * cert-manager (undefined: no such Secret yet):
 *
 * - ISSUED: `tls.crt` holds a certificate (its first, the leaf) valid now and naming the hostname, expiring at its
 *   notAfter;
 * - ERROR: the leaf has expired, is not valid yet, does not name the hostname, or cannot be read;
 * - PENDING: no Secret, or one without `tls.crt` yet.
 */
export function secretCertificateStateOf(secret: V1Secret | undefined, hostname: string, now: Date): HostnameCertificate {
  const encoded = secret?.data?.['tls.crt'];
  if (secret === undefined || encoded === undefined || encoded === '') return { status: 'PENDING', error: null, expires_at: null };
  const where = `Secret ${secret.metadata?.namespace ?? ''}/${secret.metadata?.name ?? ''}`;
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(Buffer.from(encoded, 'base64'));
  } catch {
    return { status: 'ERROR', error: trimmed(`${where} holds no readable certificate in tls.crt`), expires_at: null };
  }
  const expiresAt = leaf.validToDate.toISOString();
  if (leaf.checkHost(hostname, { subject: 'never' }) === undefined) {
    return { status: 'ERROR', error: trimmed(`the certificate in ${where} does not name ${hostname}`), expires_at: expiresAt };
  }
  if (leaf.validToDate.getTime() <= now.getTime()) return { status: 'ERROR', error: trimmed(`the certificate in ${where} expired at ${expiresAt}`), expires_at: expiresAt };
  if (leaf.validFromDate.getTime() > now.getTime()) {
    return { status: 'ERROR', error: trimmed(`the certificate in ${where} is not valid before ${leaf.validFromDate.toISOString()}`), expires_at: expiresAt };
  }
  return { status: 'ISSUED', error: null, expires_at: expiresAt };
}

/** `<namespace>/<name>` of a Secret or Certificate, the key the two are matched by. */
function secretKey(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}/${name}`;
}

/** Where a state comes from: cert-manager's Certificates, or (without cert-manager) the Secrets themselves. */
export type CertificateSource =
  | { kind: 'cert-manager'; certificates: readonly CertManagerCertificate[] }
  | { kind: 'secrets'; secrets: ReadonlyMap<string, V1Secret>; now: Date };

/**
 * Each hostname Slipway's Ingresses ask a certificate for, with its state: the Certificate of an Ingress's `tls`
 * entry is the one of its namespace that fills the entry's Secret; without cert-manager, the Secret itself.
 */
export function hostnameCertificates(ingresses: readonly V1Ingress[], source: CertificateSource): Map<string, HostnameCertificate> {
  const bySecret = new Map<string, CertManagerCertificate>();
  if (source.kind === 'cert-manager') {
    for (const certificate of source.certificates) {
      const secret = certificate.spec?.secretName;
      if (secret !== undefined) bySecret.set(secretKey(certificate.metadata?.namespace, secret), certificate);
    }
  }
  const states = new Map<string, HostnameCertificate>();
  for (const ingress of ingresses) {
    for (const tls of ingress.spec?.tls ?? []) {
      const key = tls.secretName === undefined ? undefined : secretKey(ingress.metadata?.namespace, tls.secretName);
      for (const host of tls.hosts ?? []) {
        const hostname = host.toLowerCase();
        const state =
          source.kind === 'cert-manager'
            ? certificateStateOf(key === undefined ? undefined : bySecret.get(key), hostname)
            : secretCertificateStateOf(key === undefined ? undefined : source.secrets.get(key), hostname, source.now);
        states.set(hostname, state);
      }
    }
  }
  return states;
}

/** The Secrets the Ingresses' `tls` entries name, by `<namespace>/<name>`; one that does not exist (yet) is left out. */
async function tlsSecretsOf(core: CoreV1Api, ingresses: readonly V1Ingress[]): Promise<Map<string, V1Secret>> {
  const wanted = new Map<string, { namespace: string; name: string }>();
  for (const ingress of ingresses) {
    const namespace = ingress.metadata?.namespace;
    if (namespace === undefined) continue;
    for (const tls of ingress.spec?.tls ?? []) {
      if (tls.secretName !== undefined) wanted.set(secretKey(namespace, tls.secretName), { namespace, name: tls.secretName });
    }
  }
  const secrets = new Map<string, V1Secret>();
  for (const [key, { namespace, name }] of wanted) {
    try {
      secrets.set(key, await core.readNamespacedSecret({ namespace, name }));
    } catch (error) {
      if ((error as { code?: number }).code !== 404) throw error;
    }
  }
  return secrets;
}

export interface CertificateReportsOptions {
  config: KubeConfig;
  /** Sends one batch to the control plane (AgentControlPlane.reportCertificates); a throw means it may not have it. */
  report(report: AgentCertificateReport): Promise<unknown>;
  onTrouble(message: string): void;
  periodMs?: number | undefined;
  fullReportMs?: number | undefined;
}

export interface CertificateReports {
  stop(): Promise<void>;
}

function sameState(a: HostnameCertificate, b: HostnameCertificate): boolean {
  return a.status === b.status && a.error === b.error && a.expires_at === b.expires_at;
}

export function startCertificateReports(options: CertificateReportsOptions): CertificateReports {
  const networking = options.config.makeApiClient(NetworkingV1Api);
  const custom = options.config.makeApiClient(CustomObjectsApi);
  const core = options.config.makeApiClient(CoreV1Api);
  const periodMs = options.periodMs ?? DEFAULT_PERIOD_MS;
  const fullReportMs = options.fullReportMs ?? DEFAULT_FULL_REPORT_MS;
  const selector = `${MANAGED_BY}=${SLIPWAY}`;
  /** What the control plane accepted last (the hostnames it may hold, which a `gone` removes). */
  let reported = new Map<string, HostnameCertificate>();
  /** The control plane must be told everything: at start, after a failed report, every fullReportMs. */
  let resendAll = true;
  let fullAt = 0;
  let toldNoCertManager = false;

  const trouble = (message: string): void => {
    try {
      options.onTrouble(message);
    } catch {
      // A complaint that cannot be told is not worth stopping for.
    }
  };

  /** The Certificates of the cluster; undefined when cert-manager's CRD is not served. */
  async function listCertificates(): Promise<CertManagerCertificate[] | undefined> {
    try {
      const list = (await custom.listClusterCustomObject({ group: 'cert-manager.io', version: 'v1', plural: 'certificates' })) as { items?: CertManagerCertificate[] };
      toldNoCertManager = false;
      return list.items ?? [];
    } catch (error) {
      if ((error as { code?: number }).code !== 404) throw error;
      if (!toldNoCertManager) {
        toldNoCertManager = true;
        trouble("the cluster serves no cert-manager Certificates (cert-manager's CRDs are not installed): the hostnames' certificate states are read from their Ingresses' TLS Secrets");
      }
      return undefined;
    }
  }

  async function send(states: AgentCertificateState[], gone: string[]): Promise<void> {
    for (let start = 0; start < Math.max(states.length, gone.length); start += BATCH) {
      const batchGone = gone.slice(start, start + BATCH);
      await options.report({ certificates: states.slice(start, start + BATCH), ...(batchGone.length === 0 ? {} : { gone: batchGone }) });
    }
  }

  async function round(): Promise<void> {
    const ingresses = (await networking.listIngressForAllNamespaces({ labelSelector: selector })).items;
    const certificates = await listCertificates();
    const source: CertificateSource =
      certificates === undefined ? { kind: 'secrets', secrets: await tlsSecretsOf(core, ingresses), now: new Date() } : { kind: 'cert-manager', certificates };
    const now = hostnameCertificates(ingresses, source);
    const full = resendAll || Date.now() - fullAt >= fullReportMs;
    const changed: AgentCertificateState[] = [];
    for (const [hostname, state] of now) {
      const before = full ? undefined : reported.get(hostname);
      if (before === undefined || !sameState(before, state)) changed.push({ hostname, ...state });
    }
    const gone = [...reported.keys()].filter((hostname) => !now.has(hostname));
    if (changed.length > 0 || gone.length > 0) {
      try {
        await send(changed, gone);
      } catch (error) {
        // Part of it may have landed, or none: the next round tells everything again.
        resendAll = true;
        throw error;
      }
    }
    reported = now;
    resendAll = false;
    if (full) fullAt = Date.now();
  }

  return runReportLoop({
    periodMs,
    round,
    onFailure: (error) => trouble(`reporting the certificates of the cluster's Ingresses failed (again in ${periodMs} ms): ${kubernetesErrorMessage(error)}`),
  });
}
