import type { Kysely } from 'kysely';
import type { DB } from '../../db/db.schema.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import type { AgentCertificateReport, AgentCertificateReportAnswer, AgentCertificateState } from '../../protocol/agent-protocol.ts';
import type { CertificateState, CertificateStatus } from './certificates.service.ts';
import {
  deleteAgentCertificates,
  listClusterCertifiedDomains,
  listClusterCustomDomains,
  listClusterHostnameLabels,
  upsertAgentCertificate,
} from './certificates.cluster-reports.repo.ts';

/**
 * Certificates a cluster obtains itself (docs/https.md, "Kubernetes clusters"): a Kubernetes agent running with
 * `--cert-manager-issuer` has cert-manager certify its Ingresses' hostnames, and reports where each stands
 * (AgentCertificateReport). This keeps those reports and answers them for the custom domains of services on such
 * a cluster, in place of the control plane's own certificates (certificates.service.ts), which it never orders there.
 *
 * An agent speaks for its own cluster only: a hostname that is not a custom domain or the own hostname of a service
 * whose environment runs on the reporting cluster — another cluster's, another organization's, or no one's — is
 * ignored, counted in the answer and logged, never written.
 */
export interface ClusterCertificateReportsDeps {
  db: Kysely<DB>;
  clock: Clock;
  /** SLIPWAY_APPS_DOMAIN: the services' own hostnames are `<label>.<apps domain>`. */
  appsDomain: string;
  log: { warn(details: object, message: string): void };
}

/** At most this many ignored hostnames are named in the log line (the count says the rest). */
const NAMED_IN_LOG = 10;

export function createClusterCertificateReports(deps: ClusterCertificateReportsDeps) {
  const { db, clock } = deps;
  const appsSuffix = `.${deps.appsDomain.toLowerCase()}`;

  /** Of these (lower-case) hostnames, those of the cluster's services: their custom domains and their own hostnames. */
  async function hostnamesOfCluster(clusterId: string, hostnames: readonly string[]): Promise<Set<string>> {
    const labels = hostnames.filter((hostname) => hostname.endsWith(appsSuffix)).map((hostname) => hostname.slice(0, -appsSuffix.length)).filter((label) => !label.includes('.'));
    const [domains, ownLabels] = await Promise.all([listClusterCustomDomains(db, clusterId, hostnames), listClusterHostnameLabels(db, clusterId, labels)]);
    return new Set([...domains, ...ownLabels.map((label) => `${label}${appsSuffix}`)]);
  }

  return {
    /** Writes what the cluster's agent says of its hostnames' certificates; other hostnames are ignored and counted. */
    async record(clusterId: string, report: AgentCertificateReport): Promise<AgentCertificateReportAnswer> {
      // Within one report, the last word on a hostname counts: a state after a `gone` of the same name keeps it.
      const latest = new Map<string, AgentCertificateState | 'gone'>();
      for (const hostname of report.gone ?? []) latest.set(hostname.toLowerCase(), 'gone');
      for (const state of report.certificates) latest.set(state.hostname.toLowerCase(), state);
      const owned = await hostnamesOfCluster(clusterId, [...latest.keys()]);
      const ignored = [...latest.keys()].filter((hostname) => !owned.has(hostname));
      if (ignored.length > 0) {
        deps.log.warn(
          { cluster: clusterId, ignored: ignored.length },
          `the agent of cluster ${clusterId} reported certificates of ${ignored.length} hostname(s) that are no service's of its cluster, ignored: ${ignored.slice(0, NAMED_IN_LOG).join(', ')}${ignored.length > NAMED_IN_LOG ? ', …' : ''}`,
        );
      }
      const now = isoTimestamp(clock);
      const gone: string[] = [];
      await db.transaction().execute(async (trx) => {
        for (const [hostname, state] of latest) {
          if (!owned.has(hostname)) continue;
          if (state === 'gone') {
            gone.push(hostname);
            continue;
          }
          await upsertAgentCertificate(trx, {
            cluster_id: clusterId,
            hostname,
            status: state.status,
            error: state.status === 'ERROR' ? state.error : null,
            expires_at: state.expires_at === null ? null : new Date(state.expires_at).toISOString(),
            reported_at: now,
          });
        }
        await deleteAgentCertificates(trx, clusterId, gone);
      });
      return { recorded: latest.size - ignored.length, ignored: ignored.length };
    },

    /**
     * The certificate state of each of these custom domains whose service runs on a cluster that obtains its own
     * certificates: as its agent last reported it, PENDING before it has. Domains of other clusters are left out.
     */
    async statesOfDomains(customDomainIds: readonly string[]): Promise<Map<string, CertificateState>> {
      const states = new Map<string, CertificateState>();
      for (const row of await listClusterCertifiedDomains(db, customDomainIds)) {
        states.set(row.id, {
          status: (row.status ?? 'PENDING') as CertificateStatus,
          error: row.error,
          expiresAt: row.expires_at === null ? null : new Date(row.expires_at).toISOString(),
        });
      }
      return states;
    },
  };
}

export type ClusterCertificateReports = ReturnType<typeof createClusterCertificateReports>;
