import { Type } from 'typebox';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/db.schema.ts';
import { enqueueJobOf, handle, jobKind } from '../../jobs/job-kinds.ts';
import type { JobHandler } from '../../jobs/job-worker.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import { createAccountKey, orderCertificate, type AcmeSettings, type ChallengeResponder, type IssuedCertificate } from './certificates.acme.ts';
import {
  deleteCertificate,
  findAccount,
  findCertificateOfDomain,
  insertAccount,
  insertCertificate,
  listCertificatesOfDomains,
  listDomainsDueForCertificate,
  listServableCertificates,
  setAccountUrl,
  updateCertificate,
  type CertificateRow,
} from './certificates.repo.ts';

/**
 * Automatic HTTPS for custom domains (docs/https.md, issue 25 part 1): a verified custom domain whose
 * `generate_certificate` is on gets a certificate from the installation's ACME CA, ordered right after the domain
 * verifies (a `certificate.issue` job) and renewed from 30 days before it expires (the `certificates` schedule), and
 * the apps proxy serves it on the HTTPS port.
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

/** What a custom domain shows of its certificate. */
export interface CertificateState {
  status: CertificateStatus;
  error: string | null;
  expiresAt: string | null;
}

const CertificateIssuePayload = Type.Object({ customDomainId: Type.String(), forced: Type.Optional(Type.Boolean()) }, { additionalProperties: false });
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

/** An audit-log entry of a certificate's outcome (organization-events' EventRecord, the part that varies). */
export interface CertificateEvent {
  subject: CertificateSubject;
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

  function backoffAfter(failures: number): string {
    const delay = Math.min(FIRST_BACKOFF_MS * 2 ** Math.max(0, failures - 1), MAX_BACKOFF_MS);
    return new Date(clock.now().getTime() + delay).toISOString();
  }

  /** Sends every servable certificate to the apps proxy (the whole set: it replaces the proxy's). */
  async function publish(): Promise<void> {
    const proxy = deps.proxy();
    if (proxy === undefined) return;
    const served: ServedCertificate[] = [];
    for (const row of await listServableCertificates(db, isoTimestamp(clock))) {
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

  /** The row of the domain's certificate, created PENDING (or reset when the domain changed name). */
  async function rowFor(customDomainId: string, hostname: string): Promise<CertificateRow> {
    const existing = await findCertificateOfDomain(db, customDomainId);
    if (existing !== undefined && existing.hostname === hostname) return existing;
    if (existing !== undefined) await deleteCertificate(db, existing.id);
    const now = isoTimestamp(clock);
    const row: CertificateRow = {
      id: newId(),
      hostname,
      custom_domain_id: customDomainId,
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

  async function failed(row: CertificateRow, subject: CertificateSubject, renewal: boolean, reason: string): Promise<void> {
    const failures = row.failures + 1;
    await updateCertificate(db, row.id, { status: 'ERROR', last_error: reason, failures, next_attempt_at: backoffAfter(failures), updated_at: isoTimestamp(clock) });
    deps.log.warn({ hostname: row.hostname, failures }, `no certificate for ${row.hostname}: ${reason}`);
    await deps
      .audit({ subject, operationId: renewal ? 'renewCertificate' : 'issueCertificate', outcome: 'FAILURE', change: { domain: row.hostname, certificate_status: 'ERROR', certificate_error: reason } })
      .catch((error: unknown) => deps.log.warn({ hostname: row.hostname }, `the certificate's failure is not in the audit log: ${errorText(error)}`));
  }

  /**
   * Orders the domain's certificate now, when it is due (or `forced`); the work of a `certificate.issue` job. Every
   * outcome is stored on the certificate: it never throws for the CA's or DNS's reasons (the job's own retries would
   * bypass the backoff).
   */
  async function issue(customDomainId: string, forced: boolean): Promise<void> {
    const subject = await deps.domains.subject(customDomainId);
    if (subject === undefined || !subject.generateCertificate || subject.status !== 'VALIDATED') return;
    const row = await rowFor(customDomainId, subject.domain);
    const now = clock.now();
    const notDue = row.next_attempt_at !== null && Date.parse(row.next_attempt_at) > now.getTime();
    // `forced` overrides a failure's backoff, never a valid certificate's renewal time (a domain that flapped).
    if (notDue && (!forced || row.status === 'ISSUED')) return;
    const renewal = row.chain_pem !== null;
    if (subject.domain.startsWith('*.')) {
      await failed(row, subject, renewal, 'a wildcard certificate needs the DNS-01 challenge, which Slipway does not answer: add the names it covers as domains of their own');
      return;
    }
    const proxy = deps.proxy();
    if (proxy === undefined) {
      await failed(row, subject, renewal, 'the apps proxy serves no HTTPS here (SLIPWAY_APPS_HTTPS_PORT is unset, or the local agent has not started)');
      return;
    }
    const problem = await deps.domains.problemPointingHere(customDomainId).catch((error: unknown) => `DNS: ${errorText(error)}`);
    if (problem !== undefined) {
      await failed(row, subject, renewal, `the domain does not point here any more: ${problem}`);
      return;
    }
    await updateCertificate(db, row.id, { status: row.chain_pem === null ? 'PENDING' : row.status, updated_at: isoTimestamp(clock) });
    let issued: IssuedCertificate;
    try {
      const { keyPem, accountUrl } = await account();
      const ordered = await orderCertificate(deps.acme, { keyPem, accountUrl }, subject.domain, proxy, (url) => setAccountUrl(db, deps.acme.directoryUrl, url));
      issued = ordered;
    } catch (error) {
      await failed(row, subject, renewal, `the CA refused the order: ${errorText(error)}`);
      return;
    }
    const renewAt = new Date(Math.max(Date.parse(issued.notAfter) - RENEW_BEFORE_MS, clock.now().getTime() + FIRST_BACKOFF_MS)).toISOString();
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
    await deps
      .audit({ subject, operationId: renewal ? 'renewCertificate' : 'issueCertificate', outcome: 'SUCCESS', change: { domain: row.hostname, certificate_status: 'ISSUED', certificate_expires_at: issued.notAfter } })
      .catch((error: unknown) => deps.log.warn({ hostname: row.hostname }, `the certificate is not in the audit log: ${errorText(error)}`));
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
      await enqueueJobOf(db, clock, CERTIFICATE_ISSUE, { customDomainId, forced: true }, { serialKey: `certificate:${customDomainId}`, maxAttempts: 3 });
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
      const due = await listDomainsDueForCertificate(db, isoTimestamp(clock), RENEW_BATCH);
      for (const { id } of due) {
        await enqueueJobOf(db, clock, CERTIFICATE_ISSUE, { customDomainId: id }, { serialKey: `certificate:${id}`, maxAttempts: 3 });
      }
      if (due.length > 0) deps.wakeWorkers();
      return due.length;
    },

    issue,
    publish,

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
      await certificates.issue(payload.customDomainId, payload.forced === true);
    },
  });
}
