import { CustomObjectsApi, NetworkingV1Api, type KubeConfig, type V1Ingress } from '@kubernetes/client-node';
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
 * A cluster without cert-manager's CRD (the list answers 404) reports nothing, and says so once.
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
 * Each hostname Slipway's Ingresses ask a certificate for, with its state: the Certificate of an Ingress's `tls`
 * entry is the one of its namespace that fills the entry's Secret.
 */
export function hostnameCertificates(ingresses: readonly V1Ingress[], certificates: readonly CertManagerCertificate[]): Map<string, HostnameCertificate> {
  const bySecret = new Map<string, CertManagerCertificate>();
  for (const certificate of certificates) {
    const secret = certificate.spec?.secretName;
    if (secret !== undefined) bySecret.set(`${certificate.metadata?.namespace ?? ''}/${secret}`, certificate);
  }
  const states = new Map<string, HostnameCertificate>();
  for (const ingress of ingresses) {
    for (const tls of ingress.spec?.tls ?? []) {
      const certificate = tls.secretName === undefined ? undefined : bySecret.get(`${ingress.metadata?.namespace ?? ''}/${tls.secretName}`);
      for (const host of tls.hosts ?? []) {
        const hostname = host.toLowerCase();
        states.set(hostname, certificateStateOf(certificate, hostname));
      }
    }
  }
  return states;
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
        trouble("the cluster serves no cert-manager Certificates (cert-manager's CRDs are not installed): the hostnames' certificate states are not reported");
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
    if (certificates === undefined) return;
    const now = hostnameCertificates(ingresses, certificates);
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
