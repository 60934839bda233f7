import { X509Certificate } from 'node:crypto';
import { Type } from 'typebox';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/db.schema.ts';
import { enqueueJobOf, handle, jobKind } from '../../jobs/job-kinds.ts';
import type { JobHandler } from '../../jobs/job-worker.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import { createAccountKey, orderCertificate, type AcmeSettings, type ChallengeResponder, type IssuedCertificate } from './certificates.acme.ts';
import { createInstallationRoot, INSTALLATION_CA_RENEW_BEFORE_MS, issueFromInstallationRoot, type InstallationRoot } from './certificates.installation-ca.ts';
import {
  deleteCertificate,
  findAccount,
  findCertificateOfDomain,
  findCertificateOfService,
  findInstallationRoot,
  insertAccount,
  insertInstallationRoot,
  insertCertificate,
  listCertificatesOfDomains,
  listDomainsDueForCertificate,
  listExpiredCertificates,
  listServableCertificates,
  listServedHostnames,
  listServiceCertificatesDue,
  setAccountUrl,
  updateCertificate,
  type CertificateRow,
} from './certificates.repo.ts';

/**
 * Automatic HTTPS (docs/https.md, issue 25): a verified custom domain whose `generate_certificate` is on gets a
 * certificate from the installation's ACME CA, ordered right after the domain verifies (a `certificate.issue` job)
 * and renewed from 30 days before it expires (the `certificates` schedule), and the apps proxy serves it on the HTTPS
 * port. So does a service's own host name (SLIPWAY_HTTPS_SERVICE_HOSTNAMES): ordered
 * when the service is deployed with a public port on a cluster this installation's apps proxy serves, and for those
 * already running when HTTPS starts being served; its row goes when the name stops being routed here.
 *
 * Who issues depends on the name (`issuerOf`): the ACME CA for public names; for the names no public CA issues for
 * (`*.localhost`, `.internal`, …) the installation's own CA (certificates.installation-ca.ts), unless told to ask
 * the ACME directory for those too. The installation CA's leaves need no challenge and are renewed 10 days before
 * their 30 days end.
 *
 *   no row ──job──▶ PENDING ──order valid──▶ ISSUED (next attempt: 30 days before expiry) ──due──▶ ordered again
 *                      └──order failed──▶ ERROR + last_error (next attempt after 5 min × 2^(failures−1), ≤ 24 h)
 *
 * An ERROR keeps the chain and key of the last issued certificate: it serves until it expires. Before each order the
 * domain's DNS is checked again (custom-domains.verification.ts, SLIPWAY_DNS_SERVERS): a domain that no longer points
 * here is not ordered for (a CA order would fail anyway, and count against its rate limits); its verdict is stored.
 * Orders of one domain run one at a time (the job's serial key). Each outcome is an audit-log event of the domain's
 * service; a failure is also announced to the webhooks subscribed to organization events.
 */

export const CERTIFICATE_STATUSES = ['PENDING', 'ISSUED', 'ERROR'] as const;
export type CertificateStatus = (typeof CERTIFICATE_STATUSES)[number];

/** The ACME directory, or the installation's own CA. */
export type CertificateIssuer = 'acme' | 'installation-ca';

/** What a custom domain shows of its certificate. */
export interface CertificateState {
  status: CertificateStatus;
  error: string | null;
  expiresAt: string | null;
}

/** One of the two: the custom domain, or the service whose own host name the certificate is for. */
const CertificateIssuePayload = Type.Object(
  { customDomainId: Type.Optional(Type.String()), serviceId: Type.Optional(Type.String()), forced: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
export const CERTIFICATE_ISSUE = jobKind('certificate.issue', CertificateIssuePayload);

const DAY_MS = 24 * 60 * 60 * 1000;
/** Renewal starts this long before expiry (Let's Encrypt's certificates last 90 days). */
export const RENEW_BEFORE_MS = 30 * DAY_MS;
const FIRST_BACKOFF_MS = 5 * 60 * 1000;
const MAX_BACKOFF_MS = DAY_MS;
/** Orders enqueued per schedule run: the CA's rate limits favour a steady trickle over a burst. */
const RENEW_BATCH = 20;
/** How often the schedule looks for certificates to order or renew. */
export const DEFAULT_CERTIFICATE_CHECK_INTERVAL_MS = 10 * 60 * 1000;
/** The longest last_error kept: a CA's problem document can be long. */
const MAX_ERROR_CHARS = 1_000;

/** A certificate as the apps proxy serves it (the engine's ServedCertificate): for `hostnames`, chain and key in PEM. */
export interface ServedCertificate {
  hostnames: string[];
  chain: string;
  key: string;
}

/** What the certificates need of the apps proxy: its HTTP-01 answers, and the certificates it serves (the whole set). */
export interface HttpsProxyPort extends ChallengeResponder {
  setCertificates(certificates: readonly ServedCertificate[]): Promise<void>;
}

/** The domain a certificate is for, as the custom domains module knows it. */
export interface CertificateSubject {
  domain: string;
  status: string;
  generateCertificate: boolean;
  service: { id: string; kind: string; name: string; organizationId: string; projectId: string; environmentId: string };
}

/** A service's own host name, routed by this installation's apps proxy. */
export interface ServiceHostnameSubject {
  hostname: string;
  service: CertificateSubject['service'];
}

/** An audit-log entry of a certificate's outcome (organization-events' EventRecord, the part that varies). */
export interface CertificateEvent {
  subject: Pick<CertificateSubject, 'domain' | 'service'>;
  /** CUSTOM_DOMAIN for a custom domain's certificate; none for the service's own host name (the service itself). */
  subTarget: 'CUSTOM_DOMAIN' | null;
  operationId: 'issueCertificate' | 'renewCertificate';
  outcome: 'SUCCESS' | 'FAILURE';
  change: Record<string, unknown>;
}

export interface CertificatesDeps {
  db: Kysely<DB>;
  clock: Clock;
  secrets: SecretBox;
  acme: AcmeSettings;
  /** Whether the installation serves HTTPS at all (SLIPWAY_APPS_HTTPS_PORT set): domains show a certificate state. */
  configured: boolean;
  /** Who issues for a host name (SLIPWAY_HTTPS_PRIVATE_NAMES decides for the non-public ones). */
  issuerOf(hostname: string): CertificateIssuer;
  /** The installation's name, in its CA's subject (the public URL's host, or `slipway`). */
  installationName: string;
  /**
   * The apps proxy's HTTPS (its certificates and HTTP-01 answers); undefined when this process serves none
   * (SLIPWAY_APPS_HTTPS_PORT unset, or no local agent yet): nothing is ordered then.
   */
  proxy(): HttpsProxyPort | undefined;
  domains: {
    subject(customDomainId: string): Promise<CertificateSubject | undefined>;
    /** Asks DNS again (storing the verdict): undefined when the domain still points here, else why not. */
    problemPointingHere(customDomainId: string): Promise<string | undefined>;
  };
  /**
   * The services' own host names, when they get certificates (SLIPWAY_HTTPS_SERVICE_HOSTNAMES);
   * undefined when they do not.
   */
  serviceHostnames?: {
    /** The service's host name while it is deployed with a public port on a cluster served here; else undefined. */
    subject(serviceId: string): Promise<ServiceHostnameSubject | undefined>;
    /** Every service that has such a host name now (those deployed before HTTPS was served). */
    candidates(): Promise<string[]>;
  };
  audit(event: CertificateEvent): Promise<void>;
  wakeWorkers(): void;
  log: { warn(details: object, message: string): void; info(details: object, message: string): void };
}

function errorText(error: unknown): string {
  const message = (error as Error).message ?? String(error);
  return message.length > MAX_ERROR_CHARS ? `${message.slice(0, MAX_ERROR_CHARS)}…` : message;
}

export function createCertificatesService(deps: CertificatesDeps) {
  const { db, clock } = deps;
  const sealKeyFor = (certificateId: string) => `certificate:${certificateId}`;
  const accountKeyFor = (directoryUrl: string) => `acme-account:${directoryUrl}`;

  /** The installation's account at the configured directory, created (key sealed) on first use. */
  async function account(): Promise<{ keyPem: string; accountUrl: string | undefined }> {
    const directoryUrl = deps.acme.directoryUrl;
    let row = await findAccount(db, directoryUrl);
    if (row === undefined) {
      const keyPem = await createAccountKey();
      await insertAccount(db, {
        directory_url: directoryUrl,
        email: deps.acme.email ?? null,
        key_sealed: deps.secrets.seal(keyPem, accountKeyFor(directoryUrl)),
        account_url: null,
        created_at: isoTimestamp(clock),
      });
      row = await findAccount(db, directoryUrl);
      if (row === undefined) throw new Error('the ACME account was not stored');
    }
    return { keyPem: deps.secrets.open(row.key_sealed, accountKeyFor(directoryUrl)), accountUrl: row.account_url ?? undefined };
  }

  const rootKeyFor = 'installation-ca';

  /** The installation CA's root, created (key sealed) on first use; the one a racing replica created wins. */
  async function installationRoot(): Promise<InstallationRoot> {
    let row = await findInstallationRoot(db);
    if (row === undefined) {
      const created = await createInstallationRoot(deps.installationName, clock.now());
      await insertInstallationRoot(db, {
        id: 'root',
        certificate_pem: created.certificatePem,
        key_sealed: deps.secrets.seal(created.keyPem, rootKeyFor),
        not_after: new Date(new X509Certificate(created.certificatePem).validTo).toISOString(),
        created_at: isoTimestamp(clock),
      });
      row = await findInstallationRoot(db);
      if (row === undefined) throw new Error('the installation CA was not stored');
    }
    return { certificatePem: row.certificate_pem, keyPem: deps.secrets.open(row.key_sealed, rootKeyFor) };
  }

  function backoffAfter(failures: number): string {
    const delay = Math.min(FIRST_BACKOFF_MS * 2 ** Math.max(0, failures - 1), MAX_BACKOFF_MS);
    return new Date(clock.now().getTime() + delay).toISOString();
  }

  /** When the first certificate the proxy was last given expires: it must then be given the set without it. */
  let servedUntil: number | undefined;

  /** Sends every servable certificate to the apps proxy (the whole set: it replaces the proxy's). */
  async function publish(): Promise<void> {
    const proxy = deps.proxy();
    if (proxy === undefined) return;
    const served: ServedCertificate[] = [];
    const servable = await listServableCertificates(db, isoTimestamp(clock));
    servedUntil = servable.reduce<number | undefined>((earliest, row) => {
      const end = row.not_after === null ? undefined : Date.parse(row.not_after);
      return end === undefined || (earliest !== undefined && earliest <= end) ? earliest : end;
    }, undefined);
    for (const row of servable) {
      if (row.chain_pem === null || row.key_sealed === null) continue;
      try {
        served.push({ hostnames: [row.hostname], chain: row.chain_pem, key: deps.secrets.open(row.key_sealed, sealKeyFor(row.id)) });
      } catch (error) {
        // Sealed under another installation key (a key file replaced, a database copied): ordered again at once.
        deps.log.warn({ certificate: row.id, hostname: row.hostname }, `the key of the certificate cannot be opened: ${errorText(error)}; it is ordered again`);
        await updateCertificate(db, row.id, {
          status: 'ERROR',
          last_error: "its private key cannot be opened with this installation's secret key: a new certificate is ordered",
          next_attempt_at: isoTimestamp(clock),
          updated_at: isoTimestamp(clock),
        });
      }
    }
    await proxy.setCertificates(served);
  }

  /** What a certificate is for: a custom domain, or a service's own host name. */
  type Target = { customDomainId: string; serviceId?: undefined } | { serviceId: string; customDomainId?: undefined };

  /** The target's certificate row, created PENDING (or reset when its host name changed). */
  async function rowFor(target: Target, hostname: string): Promise<CertificateRow> {
    const existing = target.customDomainId !== undefined ? await findCertificateOfDomain(db, target.customDomainId) : await findCertificateOfService(db, target.serviceId);
    if (existing !== undefined && existing.hostname === hostname) return existing;
    if (existing !== undefined) await deleteCertificate(db, existing.id);
    const now = isoTimestamp(clock);
    const row: CertificateRow = {
      id: newId(),
      hostname,
      custom_domain_id: target.customDomainId ?? null,
      service_id: target.serviceId ?? null,
      status: 'PENDING',
      last_error: null,
      chain_pem: null,
      key_sealed: null,
      not_before: null,
      not_after: null,
      issued_at: null,
      failures: 0,
      next_attempt_at: null,
      created_at: now,
      updated_at: now,
    };
    await insertCertificate(db, row);
    return row;
  }

  /** The audit-log entry of an outcome, never failing the order over it. */
  async function audited(event: CertificateEvent): Promise<void> {
    await deps.audit(event).catch((error: unknown) => deps.log.warn({ hostname: event.subject.domain }, `the certificate's outcome is not in the audit log: ${errorText(error)}`));
  }

  async function failed(row: CertificateRow, event: Pick<CertificateEvent, 'subject' | 'subTarget'>, renewal: boolean, reason: string): Promise<void> {
    const failures = row.failures + 1;
    await updateCertificate(db, row.id, { status: 'ERROR', last_error: reason, failures, next_attempt_at: backoffAfter(failures), updated_at: isoTimestamp(clock) });
    deps.log.warn({ hostname: row.hostname, failures }, `no certificate for ${row.hostname}: ${reason}`);
    await audited({ ...event, operationId: renewal ? 'renewCertificate' : 'issueCertificate', outcome: 'FAILURE', change: { domain: row.hostname, certificate_status: 'ERROR', certificate_error: reason } });
  }

  /** Whether the row's next order is due: `forced` overrides a failure's backoff, never a valid certificate's renewal time. */
  function isDue(row: CertificateRow, forced: boolean): boolean {
    const notDue = row.next_attempt_at !== null && Date.parse(row.next_attempt_at) > clock.now().getTime();
    return !notDue || (forced && row.status !== 'ISSUED');
  }

  /**
   * Orders the row's certificate from the CA and stores the outcome (the part both targets share): the apps proxy
   * must serve HTTPS here to answer the challenge.
   */
  async function order(row: CertificateRow, event: Pick<CertificateEvent, 'subject' | 'subTarget'>, renewal: boolean, proxy: HttpsProxyPort): Promise<void> {
    await updateCertificate(db, row.id, { status: row.chain_pem === null ? 'PENDING' : row.status, updated_at: isoTimestamp(clock) });
    const issuer = deps.issuerOf(row.hostname);
    let issued: IssuedCertificate;
    try {
      if (issuer === 'installation-ca') {
        issued = await issueFromInstallationRoot(await installationRoot(), row.hostname, clock.now());
      } else {
        const { keyPem, accountUrl } = await account();
        issued = await orderCertificate(deps.acme, { keyPem, accountUrl }, row.hostname, proxy, (url) => setAccountUrl(db, deps.acme.directoryUrl, url));
      }
    } catch (error) {
      await failed(row, event, renewal, `${issuer === 'installation-ca' ? "the installation's CA could not issue it" : 'the CA refused the order'}: ${errorText(error)}`);
      return;
    }
    const renewBefore = issuer === 'installation-ca' ? INSTALLATION_CA_RENEW_BEFORE_MS : RENEW_BEFORE_MS;
    const renewAt = new Date(Math.max(Date.parse(issued.notAfter) - renewBefore, clock.now().getTime() + FIRST_BACKOFF_MS)).toISOString();
    await updateCertificate(db, row.id, {
      status: 'ISSUED',
      last_error: null,
      chain_pem: issued.chainPem,
      key_sealed: deps.secrets.seal(issued.keyPem, sealKeyFor(row.id)),
      not_before: issued.notBefore,
      not_after: issued.notAfter,
      issued_at: isoTimestamp(clock),
      failures: 0,
      next_attempt_at: renewAt,
      updated_at: isoTimestamp(clock),
    });
    deps.log.info({ hostname: row.hostname, notAfter: issued.notAfter }, `certificate ${renewal ? 'renewed' : 'issued'} for ${row.hostname}`);
    await publish();
    await audited({ ...event, operationId: renewal ? 'renewCertificate' : 'issueCertificate', outcome: 'SUCCESS', change: { domain: row.hostname, certificate_status: 'ISSUED', certificate_expires_at: issued.notAfter } });
  }

  const NO_PROXY_REASON = 'the apps proxy serves no HTTPS here (SLIPWAY_APPS_HTTPS_PORT is unset, or the local agent has not started)';

  /**
   * Orders the domain's certificate now, when it is due (or `forced`); the work of a `certificate.issue` job. Every
   * outcome is stored on the certificate: it never throws for the CA's or DNS's reasons (the job's own retries would
   * bypass the backoff).
   */
  async function issueForDomain(customDomainId: string, forced: boolean): Promise<void> {
    const subject = await deps.domains.subject(customDomainId);
    if (subject === undefined || !subject.generateCertificate || subject.status !== 'VALIDATED') return;
    const row = await rowFor({ customDomainId }, subject.domain);
    if (!isDue(row, forced)) return;
    const renewal = row.chain_pem !== null;
    const event = { subject, subTarget: 'CUSTOM_DOMAIN' as const };
    if (subject.domain.startsWith('*.') && deps.issuerOf(subject.domain) === 'acme') {
      await failed(row, event, renewal, 'a wildcard certificate needs the DNS-01 challenge, which Slipway does not answer: add the names it covers as domains of their own');
      return;
    }
    const proxy = deps.proxy();
    if (proxy === undefined) {
      await failed(row, event, renewal, NO_PROXY_REASON);
      return;
    }
    const problem = await deps.domains.problemPointingHere(customDomainId).catch((error: unknown) => `DNS: ${errorText(error)}`);
    if (problem !== undefined) {
      await failed(row, event, renewal, `the domain does not point here any more: ${problem}`);
      return;
    }
    await order(row, event, renewal, proxy);
  }

  /**
   * The same for a service's own host name. Its DNS is the apps domain's (a wildcard record the operator keeps), not
   * checked here: a name that does not reach the apps port fails the CA's challenge, with the CA's reason and the
   * same backoff. A service whose name is no longer routed here (its port made private, stopped, moved) loses its
   * certificate.
   */
  async function issueForService(serviceId: string, forced: boolean): Promise<void> {
    if (deps.serviceHostnames === undefined) return;
    const subject = await deps.serviceHostnames.subject(serviceId);
    if (subject === undefined) {
      const existing = await findCertificateOfService(db, serviceId);
      if (existing !== undefined) {
        await deleteCertificate(db, existing.id);
        await publish();
      }
      return;
    }
    const row = await rowFor({ serviceId }, subject.hostname);
    if (!isDue(row, forced)) return;
    const renewal = row.chain_pem !== null;
    const event = { subject: { domain: subject.hostname, service: subject.service }, subTarget: null };
    const proxy = deps.proxy();
    if (proxy === undefined) {
      await failed(row, event, renewal, NO_PROXY_REASON);
      return;
    }
    await order(row, event, renewal, proxy);
  }

  async function issue(target: Target, forced: boolean): Promise<void> {
    if (target.customDomainId !== undefined) await issueForDomain(target.customDomainId, forced);
    else await issueForService(target.serviceId, forced);
  }

  function enqueueOrder(target: Target, forced: boolean): Promise<unknown> {
    const serialKey = target.customDomainId !== undefined ? `certificate:${target.customDomainId}` : `certificate:service:${target.serviceId}`;
    return enqueueJobOf(db, clock, CERTIFICATE_ISSUE, { ...target, ...(forced ? { forced } : {}) }, { serialKey, maxAttempts: 3 });
  }

  return {
    /** Whether this installation orders certificates (SLIPWAY_APPS_HTTPS_PORT is set). */
    get enabled(): boolean {
      return deps.configured;
    },

    /**
     * Asks for the domain's certificate now (it just verified, or its generate_certificate was turned on): ordered
     * whatever the backoff of earlier failures says, since what made them fail (its DNS) has just changed.
     */
    async requestCertificate(customDomainId: string): Promise<void> {
      if (deps.proxy() === undefined) return;
      await enqueueOrder({ customDomainId }, true);
      deps.wakeWorkers();
    },

    /**
     * A service was deployed (or its routes changed): its own host name gets a certificate if it has none, loses it
     * if it is no longer routed here. A valid certificate is not ordered again.
     */
    async requestServiceCertificate(serviceId: string): Promise<void> {
      if (deps.proxy() === undefined || deps.serviceHostnames === undefined) return;
      await enqueueOrder({ serviceId }, false);
      deps.wakeWorkers();
    },

    /** The domain changed name or stopped asking for a certificate: its certificate stops being served. */
    async forgetDomain(customDomainId: string): Promise<void> {
      const row = await findCertificateOfDomain(db, customDomainId);
      if (row === undefined) return;
      await deleteCertificate(db, row.id);
      await publish();
    },

    /** The schedule's work: enqueues the orders that are due (first certificates, renewals, retries after backoff). */
    async orderDue(): Promise<number> {
      if (deps.proxy() === undefined) return 0;
      const now = isoTimestamp(clock);
      const targets: Target[] = (await listDomainsDueForCertificate(db, now, RENEW_BATCH)).map(({ id }) => ({ customDomainId: id }));
      if (deps.serviceHostnames !== undefined) {
        for (const { service_id: serviceId } of await listServiceCertificatesDue(db, now, RENEW_BATCH)) if (serviceId !== null) targets.push({ serviceId });
      }
      for (const target of targets) await enqueueOrder(target, false);
      if (targets.length > 0) deps.wakeWorkers();
      return targets.length;
    },

    /** When HTTPS starts being served: the services already running with a public host name are ordered for. */
    async orderServiceHostnames(): Promise<number> {
      if (deps.proxy() === undefined || deps.serviceHostnames === undefined) return 0;
      const serviceIds = await deps.serviceHostnames.candidates();
      for (const serviceId of serviceIds) await enqueueOrder({ serviceId }, false);
      if (serviceIds.length > 0) deps.wakeWorkers();
      return serviceIds.length;
    },

    /**
     * The installation CA's root certificate (PEM), for people to trust; created when HTTPS starts being served with
     * the installation CA issuing. Undefined when this installation has none.
     */
    async installationRootCertificate(): Promise<string | undefined> {
      return (await findInstallationRoot(db))?.certificate_pem;
    },

    /** Creates the installation CA's root now if names it issues for may come (HTTPS served): its certificate. */
    async ensureInstallationRoot(): Promise<string> {
      return (await installationRoot()).certificatePem;
    },

    /** Which of these host names the apps proxy serves a certificate for (their links then say https). */
    async servedHostnames(hostnames: readonly string[]): Promise<Set<string>> {
      if (!deps.configured) return new Set();
      return new Set(await listServedHostnames(db, hostnames, isoTimestamp(clock)));
    },

    issue,
    publish,

    /**
     * A certificate that expired unrenewed (its domain's DNS moved away, the CA kept refusing) stops being served:
     * its name falls back to plain HTTP, and the domain says so. The schedule's work, with orderDue.
     */
    async dropExpired(): Promise<number> {
      if (servedUntil === undefined || clock.now().getTime() < servedUntil) return 0;
      const now = isoTimestamp(clock);
      const expired = await listExpiredCertificates(db, now);
      for (const row of expired) {
        const reason = `the certificate expired at ${row.not_after ?? now} without being renewed${row.last_error === null ? '' : ` (${row.last_error})`}: the name is served over plain HTTP until a new one is issued`;
        await updateCertificate(db, row.id, { status: 'ERROR', last_error: reason.slice(0, MAX_ERROR_CHARS), chain_pem: null, key_sealed: null, updated_at: now });
      }
      await publish();
      return expired.length;
    },

    /** The certificate state of each domain that asks for one (PENDING until a row says otherwise). */
    async statesOf(customDomainIds: readonly string[]): Promise<Map<string, CertificateState>> {
      const states = new Map<string, CertificateState>();
      for (const row of await listCertificatesOfDomains(db, customDomainIds)) {
        if (row.custom_domain_id === null) continue;
        states.set(row.custom_domain_id, { status: row.status as CertificateStatus, error: row.last_error, expiresAt: row.not_after });
      }
      return states;
    },
  };
}

export type CertificatesService = ReturnType<typeof createCertificatesService>;

/** The worker's handler of `certificate.issue`. */
export function createCertificateIssueHandler(certificates: Pick<CertificatesService, 'issue'>): readonly [string, JobHandler] {
  return handle(CERTIFICATE_ISSUE, {
    async run(_job, payload) {
      const forced = payload.forced === true;
      if (payload.customDomainId !== undefined) await certificates.issue({ customDomainId: payload.customDomainId }, forced);
      else if (payload.serviceId !== undefined) await certificates.issue({ serviceId: payload.serviceId }, forced);
    },
  });
}
