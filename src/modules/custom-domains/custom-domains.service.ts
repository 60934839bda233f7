import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { isForeignKeyViolation, uniqueOrConflict } from '../../db/db.errors.ts';
import type { DialectName } from '../../db/db.client.ts';
import { lockUntilCommit } from '../../db/db.locks.ts';
import type { DB } from '../../db/db.schema.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { badRequest, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { kindDefinition, type StoredService } from '../services/services.kinds.ts';
import type { CertificateState } from '../certificates/certificates.service.ts';
import type { DomainResolver } from './custom-domains.dns.ts';
import {
  countDomains,
  deleteDomain,
  findDomain,
  findDomainById,
  insertDomain,
  listDomains,
  listDomainsToRecheck,
  listValidatedDomains,
  updateDomain,
  type CustomDomainRow,
} from './custom-domains.repo.ts';
import {
  challengeRecord,
  checkDomain,
  normaliseDomain,
  type CheckedDomainStatus,
  type CustomDomainStatus,
  type DomainCheck,
} from './custom-domains.verification.ts';

/**
 * Custom domains of applications, containers and Helm charts (the reference's Application and Helm Custom Domain
 * operations, and the same for containers): a domain of the user's pointed at the service's own public host name, verified through DNS
 * (custom-domains.verification.ts). Checks run when asked (getCustomDomainStatus, check…CustomDomain) and their
 * verdict is stored, so listings show the last one and the reverse proxy routes only VALIDATED domains.
 */

/**
 * Kinds that serve traffic on ports, hence can answer on a domain. A Helm chart does through the ports it declares
 * (services.kind-helm.ts): the Kubernetes driver routes its hostnames, custom domains included, to the chart's
 * Service its default HTTP or gRPC port names (kubernetes-helm.ts); the local cluster runs no charts.
 */
export type DomainServiceKind = 'APPLICATION' | 'CONTAINER' | 'HELM';

/** Per service: enough for a few environments' worth of names, small enough to check in one request. */
export const MAX_DOMAINS_PER_SERVICE = 20;

/** How long after being added a domain that has not passed its DNS check is still checked in the background. */
const RECHECK_FOR_MS = 7 * 24 * 60 * 60 * 1000;

/** Domains checked per background run: a run stays short whatever the backlog; the least recently checked go first. */
const RECHECK_BATCH = 50;

export interface CustomDomainsDeps {
  db: Kysely<DB>;
  dialect: DialectName;
  clock: Clock;
  /** SLIPWAY_APPS_DOMAIN: where services' own host names live (no custom domain may be under it). */
  appsDomain: string;
  resolver: DomainResolver;
  services: {
    findService(serviceId: string): Promise<StoredService | undefined>;
    /** The service's own public host name, which a custom domain's CNAME points at; undefined once it is gone. */
    publicHostnameOf(serviceId: string): Promise<string | undefined>;
  };
  /**
   * Automatic HTTPS (src/modules/certificates): the certificate state a domain shows, and the orders a domain's
   * verification or edit asks for. Without it, a domain shows no certificate state.
   */
  certificates?: {
    /** Whether the installation serves HTTPS: without it, domains show no certificate state. */
    readonly enabled: boolean;
    statesOf(customDomainIds: readonly string[]): Promise<Map<string, CertificateState>>;
    requestCertificate(customDomainId: string): Promise<void>;
    forgetDomain(customDomainId: string): Promise<void>;
  };
  /**
   * Certificates a cluster obtains itself (Kubernetes with cert-manager: certificates.cluster-reports.ts): the state
   * of each domain whose service runs on such a cluster, as its agent reported it. Those domains show it whether or
   * not this installation serves HTTPS itself.
   */
  clusterCertificates?: { statesOfDomains(customDomainIds: readonly string[]): Promise<Map<string, CertificateState>> };
}

export interface CustomDomainBody {
  domain: string;
  generate_certificate: boolean;
  use_cdn?: boolean;
}

const TAKEN = 'this domain is already used by a service';

/** A domain's certificate state, and whether its cluster (not this installation) obtains the certificate. */
type DomainCertificate = CertificateState & { byCluster?: true };

export function createCustomDomainsService(deps: CustomDomainsDeps) {
  const { db, clock } = deps;

  async function requireService(kind: DomainServiceKind, serviceId: string): Promise<StoredService> {
    const service = await deps.services.findService(serviceId);
    if (service === undefined || service.kind !== kind) throw notFound(`${kind.toLowerCase()} ${serviceId} not found`);
    return service;
  }

  async function validationDomainOf(service: StoredService): Promise<string> {
    const hostname = await deps.services.publicHostnameOf(service.id);
    if (hostname === undefined) throw notFound(`${service.kind.toLowerCase()} ${service.id} not found`);
    return hostname;
  }

  /**
   * What a domain shows of its certificate: nothing when it asks for none, PENDING until the first order ends. A
   * domain certified by its cluster has a state whatever this installation serves; the others only when it serves HTTPS.
   */
  function certificateFields(row: CustomDomainRow, state: DomainCertificate | undefined) {
    const certified = state?.byCluster === true || deps.certificates?.enabled === true;
    if (row.generate_certificate !== 1 || !certified) return { certificate_status: null, certificate_error: null, certificate_expires_at: null };
    return { certificate_status: state?.status ?? ('PENDING' as const), certificate_error: state?.error ?? null, certificate_expires_at: state?.expiresAt ?? null };
  }

  /** Each domain's certificate state: its cluster's report where its cluster certifies it, else the installation's own. */
  async function statesOf(rows: readonly CustomDomainRow[]): Promise<Map<string, DomainCertificate>> {
    const ids = rows.map((row) => row.id);
    const states: Map<string, DomainCertificate> = (await deps.certificates?.statesOf(ids)) ?? new Map<string, DomainCertificate>();
    for (const [id, state] of (await deps.clusterCertificates?.statesOfDomains(ids)) ?? []) states.set(id, { ...state, byCluster: true });
    return states;
  }

  async function viewOne(row: CustomDomainRow, validationDomain: string) {
    return view(row, validationDomain, (await statesOf([row])).get(row.id));
  }

  function view(row: CustomDomainRow, validationDomain: string, certificate: DomainCertificate | undefined) {
    return {
      id: row.id,
      created_at: row.created_at,
      updated_at: row.updated_at,
      domain: row.domain,
      generate_certificate: row.generate_certificate === 1,
      use_cdn: row.use_cdn === 1,
      validation_domain: validationDomain,
      status: row.status as CustomDomainStatus,
      verification_record: { type: 'TXT' as const, ...challengeRecord(row.domain, row.verification_token) },
      last_check:
        row.check_status === null || row.checked_at === null
          ? null
          : { status: row.check_status as CheckedDomainStatus, details: row.check_details, checked_at: row.checked_at },
      ...certificateFields(row, certificate),
    };
  }

  function domainFrom(raw: string): string {
    const result = normaliseDomain(raw, deps.appsDomain);
    if ('problem' in result) throw badRequest(`"${raw}" cannot be a custom domain: ${result.problem}`, [{ field: '/domain', message: result.problem }]);
    return result.domain;
  }

  /** A write that may race another service taking the domain (409) or the service's deletion (404). */
  async function writing<T>(service: StoredService, write: () => Promise<T>): Promise<T> {
    try {
      return await uniqueOrConflict(write, TAKEN);
    } catch (error) {
      if (isForeignKeyViolation(error)) throw notFound(`${service.kind.toLowerCase()} ${service.id} not found`);
      throw error;
    }
  }

  async function runCheck(row: CustomDomainRow, validationDomain: string): Promise<{ row: CustomDomainRow; check: DomainCheck }> {
    const check = await checkDomain(deps.resolver, row.domain, validationDomain, row.verification_token);
    const changes = {
      status: check.status ?? row.status,
      check_status: check.checked,
      check_details: check.details,
      checked_at: isoTimestamp(clock),
    };
    // A row removed meanwhile is simply not updated: the answer still reports what DNS said.
    const updated = await updateDomain(db, row.service_id, row.id, changes);
    // Verified just now: its certificate is ordered at once rather than at the renewal schedule's next run.
    if (updated && changes.status === 'VALIDATED' && row.status !== 'VALIDATED' && row.generate_certificate === 1) await deps.certificates?.requestCertificate(row.id);
    return { row: { ...row, ...changes }, check };
  }

  return {
    async listCustomDomains(kind: DomainServiceKind, serviceId: string) {
      const service = await requireService(kind, serviceId);
      const validationDomain = await validationDomainOf(service);
      const rows = await listDomains(db, serviceId);
      const states = await statesOf(rows);
      return rows.map((row) => view(row, validationDomain, states.get(row.id)));
    },

    async createCustomDomain(kind: DomainServiceKind, serviceId: string, body: CustomDomainBody) {
      const service = await requireService(kind, serviceId);
      if (!kindDefinition(service.kind).references(service.settings).publiclyReachable) {
        throw badRequest(`${kind.toLowerCase()} ${service.name} has no public port: a custom domain would reach nothing`, [
          { field: '/domain', message: 'the service needs a publicly accessible port first' },
        ]);
      }
      const domain = domainFrom(body.domain);
      const validationDomain = await validationDomainOf(service);
      const now = isoTimestamp(clock);
      const row: CustomDomainRow = {
        id: newId(),
        service_id: serviceId,
        domain,
        generate_certificate: body.generate_certificate ? 1 : 0,
        use_cdn: body.use_cdn === true ? 1 : 0,
        verification_token: randomBytes(16).toString('hex'),
        status: 'VALIDATION_PENDING',
        check_status: null,
        check_details: null,
        checked_at: null,
        created_at: now,
        updated_at: now,
      };
      await writing(service, () =>
        db.transaction().execute(async (trx) => {
          // Two concurrent adds to a service at 19 domains must not both pass the count.
          await lockUntilCommit(trx, deps.dialect, `custom-domains:${serviceId}`);
          if ((await countDomains(trx, serviceId)) >= MAX_DOMAINS_PER_SERVICE) {
            throw badRequest(`a service has at most ${MAX_DOMAINS_PER_SERVICE} custom domains`, [{ field: '/domain', message: 'too many custom domains' }]);
          }
          await insertDomain(trx, row);
        }),
      );
      return view(row, validationDomain, undefined);
    },

    /** A whole replacement (PUT); a changed domain starts over: pending, with a new ownership token and no check yet. */
    async editCustomDomain(kind: DomainServiceKind, serviceId: string, customDomainId: string, body: CustomDomainBody) {
      const service = await requireService(kind, serviceId);
      const current = await findDomain(db, serviceId, customDomainId);
      if (current === undefined) throw notFound(`custom domain ${customDomainId} not found`);
      const domain = domainFrom(body.domain);
      const moved = domain !== current.domain;
      const changes = {
        domain,
        generate_certificate: body.generate_certificate ? 1 : 0,
        use_cdn: body.use_cdn === true ? 1 : 0,
        updated_at: isoTimestamp(clock),
        ...(moved ? { status: 'VALIDATION_PENDING', verification_token: randomBytes(16).toString('hex'), check_status: null, check_details: null, checked_at: null } : {}),
      };
      const updated = await writing(service, () => updateDomain(db, serviceId, customDomainId, changes));
      if (!updated) throw notFound(`custom domain ${customDomainId} not found`);
      const edited = { ...current, ...changes };
      // A certificate names the domain: a new name (verified again first) or no certificate wanted ends it.
      if (moved || edited.generate_certificate !== 1) await deps.certificates?.forgetDomain(customDomainId);
      else if (current.generate_certificate !== 1 && edited.status === 'VALIDATED') await deps.certificates?.requestCertificate(customDomainId);
      return viewOne(edited, await validationDomainOf(service));
    },

    async deleteCustomDomain(kind: DomainServiceKind, serviceId: string, customDomainId: string): Promise<void> {
      await requireService(kind, serviceId);
      if ((await findDomain(db, serviceId, customDomainId)) === undefined) throw notFound(`custom domain ${customDomainId} not found`);
      // Its certificate stops being served with it (the row would go with the domain, the proxy's copy would not).
      await deps.certificates?.forgetDomain(customDomainId);
      if (!(await deleteDomain(db, serviceId, customDomainId))) throw notFound(`custom domain ${customDomainId} not found`);
    },

    /** One domain as stored, with its last check (no DNS query). */
    async getCustomDomain(kind: DomainServiceKind, serviceId: string, customDomainId: string) {
      const service = await requireService(kind, serviceId);
      const row = await findDomain(db, serviceId, customDomainId);
      if (row === undefined) throw notFound(`custom domain ${customDomainId} not found`);
      return viewOne(row, await validationDomainOf(service));
    },

    /** Checks one domain in DNS now, stores the verdict, and answers the domain with it. */
    async getCustomDomainStatus(kind: DomainServiceKind, serviceId: string, customDomainId: string) {
      const service = await requireService(kind, serviceId);
      const row = await findDomain(db, serviceId, customDomainId);
      if (row === undefined) throw notFound(`custom domain ${customDomainId} not found`);
      const validationDomain = await validationDomainOf(service);
      return viewOne((await runCheck(row, validationDomain)).row, validationDomain);
    },

    /** Checks every domain of the service (in parallel), stores the verdicts, answers what DNS said of each. */
    async checkCustomDomains(kind: DomainServiceKind, serviceId: string) {
      const service = await requireService(kind, serviceId);
      const validationDomain = await validationDomainOf(service);
      const checks = await Promise.all((await listDomains(db, serviceId)).map((row) => runCheck(row, validationDomain)));
      return checks.map(({ row, check }) => ({ domain_name: row.domain, status: check.checked, error_details: check.details }));
    },

    /**
     * The background check (custom-domains.schedule.ts): asks DNS again for the domains added in the last 7 days that
     * have not passed yet, so a domain goes live once its records are in place, without anyone asking. Answers how
     * many were checked. A domain whose service is gone meanwhile is skipped.
     */
    async recheckPendingDomains(): Promise<number> {
      const since = new Date(clock.now().getTime() - RECHECK_FOR_MS).toISOString();
      let checked = 0;
      for (const row of await listDomainsToRecheck(db, since, RECHECK_BATCH)) {
        const validationDomain = await deps.services.publicHostnameOf(row.service_id);
        if (validationDomain === undefined) continue;
        await runCheck(row, validationDomain);
        checked += 1;
      }
      return checked;
    },

    /** What the certificates module needs to know of a domain to order its certificate; undefined once gone. */
    async certificateSubject(customDomainId: string) {
      const row = await findDomainById(db, customDomainId);
      if (row === undefined) return undefined;
      const service = await deps.services.findService(row.service_id);
      if (service === undefined) return undefined;
      return {
        domain: row.domain,
        status: row.status,
        generateCertificate: row.generate_certificate === 1,
        service: { id: service.id, kind: service.kind, name: service.name, organizationId: service.organizationId, projectId: service.projectId, environmentId: service.environmentId },
      };
    },

    /**
     * Asks DNS again whether the domain still points at its service (the verdict is stored, as any check's):
     * undefined when it does, else what DNS says instead. Before each certificate order.
     */
    async problemPointingHere(customDomainId: string): Promise<string | undefined> {
      const row = await findDomainById(db, customDomainId);
      if (row === undefined) return 'the domain was removed';
      const validationDomain = await deps.services.publicHostnameOf(row.service_id);
      if (validationDomain === undefined) return 'its service was removed';
      const { row: checked, check } = await runCheck(row, validationDomain);
      if (checked.status === 'VALIDATED' && check.status === 'VALIDATED') return undefined;
      return `${check.checked}${check.details === null ? '' : `: ${check.details}`}`;
    },

    /** The domains of the service whose DNS check passed: what the reverse proxy routes to it. */
    async validatedDomainsOf(serviceId: string): Promise<string[]> {
      return (await listValidatedDomains(db, serviceId)).map((row) => row.domain);
    },
  };
}

export type CustomDomainsService = ReturnType<typeof createCustomDomainsService>;
