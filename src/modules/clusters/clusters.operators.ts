import type { Transaction } from 'kysely';
import type { Principal } from '../../auth/principal.ts';
import { AGENT_INSTALL_NAME, DEFAULT_AGENT_NAMESPACE, installHelmValues, installHelmValuesYaml } from '../../engine/kubernetes/kubernetes-install.ts';
import { hashToken, mintToken, recogniseToken } from '../../auth/tokens.ts';
import { uniqueOrConflict } from '../../db/db.errors.ts';
import { writeJson } from '../../db/db.json.ts';
import type { DB } from '../../db/db.schema.ts';
import { badRequest, unauthenticated } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { SLIPWAY_VERSION } from '../../lib/version.ts';
import { cleanName, nameKey } from '../../lib/names.ts';
import {
  consumeEnrollment,
  isEnrollmentUsable,
  expireEnrollments,
  findClusterById,
  findOperatorByCredential,
  insertCluster,
  insertEnrollment,
  recordOperatorReport,
  replaceAgentStatusMessage,
  replaceOperator,
} from './clusters.repo.ts';
import { DEFAULT_KUBERNETES_VERSION, nameTaken, type ClusterRecords } from './clusters.records.ts';
import type { ClustersDeps } from './clusters.service.ts';

/**
 * The Slipway operator of a self-managed cluster: the cluster with its first enrollment, the bootstrap that installs
 * the operator with a one-time enrollment token, the enrollment that trades the token for the operator's own
 * credential, and what an enrolled operator (or agent) does with that credential.
 */

const ENROLLMENT_TTL_MS = 24 * 60 * 60 * 1000;
/** How the cluster's status message starts when it is the agent's report of missing permissions. */
const AGENT_PERMISSIONS_MESSAGE = 'the agent lacks Kubernetes permissions: ';

export function createClusterOperators(deps: ClustersDeps, records: ClusterRecords) {
  const { db, clock } = deps;
  const { requireCluster } = records;

  /** The cluster an operator (or agent) credential acts for; 401 for anything else, deleted clusters included. */
  async function authenticateOperator(credential: string): Promise<{ clusterId: string; organizationId: string }> {
    if (recogniseToken(credential) !== 'operator') throw unauthenticated('invalid operator credential');
    const operator = await findOperatorByCredential(db, hashToken(credential));
    const cluster = operator === undefined ? undefined : await findClusterById(db, operator.cluster_id);
    if (cluster === undefined || cluster.status === 'DELETED') throw unauthenticated('invalid operator credential');
    return { clusterId: cluster.id, organizationId: cluster.organization_id };
  }

  /**
   * Mints a one-time enrollment token for the cluster's operator or agent (24 hours; earlier unused tokens stop
   * working). 404 for a cluster the organization does not have; 400 for one that runs no operator (a LOCAL cluster's
   * agent is the server's own, a managed cluster's is Slipway's).
   */
  async function mintEnrollment(organizationId: string, clusterId: string, what: string): Promise<{ token: string; expiresAt: string }> {
    const cluster = await requireCluster(db, organizationId, clusterId);
    if (cluster.kubernetes !== 'SELF_MANAGED') throw badRequest(`only self-managed clusters run ${what}; this cluster is ${cluster.kubernetes}`);
    const token = mintToken('enrollment');
    const now = clock.now();
    const expiresAt = new Date(now.getTime() + ENROLLMENT_TTL_MS).toISOString();
    await db.transaction().execute(async (trx) => {
      await expireEnrollments(trx, clusterId, now.toISOString());
      await insertEnrollment(trx, { id: newId(), cluster_id: clusterId, token_hash: token.hash, expires_at: expiresAt, created_at: now.toISOString() });
    });
    return { token: token.value, expiresAt };
  }

  return {
    mintEnrollment,

    /** Mints a one-time enrollment token and answers what installs the operator with it. */
    async getClusterOperatorBootstrap(organizationId: string, clusterId: string) {
      const enrollment = await mintEnrollment(organizationId, clusterId, 'the Slipway operator');
      return bootstrapView(deps.publicUrl, clusterId, enrollment.token, enrollment.expiresAt);
    },

    /**
     * What a Kubernetes agent found missing of the permissions it needs, as the cluster's status message. The
     * message is the agent's only while it holds it: one an action left (a failed deploy's reason) is not replaced,
     * and the agent's own is cleared once nothing is missing.
     */
    async noteAgentPermissions(clusterId: string, missing: readonly string[]): Promise<void> {
      const message = missing.length === 0 ? null : `${AGENT_PERMISSIONS_MESSAGE}${missing.join(', ')}`.slice(0, 4000);
      await replaceAgentStatusMessage(db, clusterId, AGENT_PERMISSIONS_MESSAGE, message, clock.now().toISOString());
    },

    /** For createSelfManagedCluster: the cluster and its first enrollment, inside the caller's transaction. */
    async createSelfManagedClusterRecords(
      trx: Transaction<DB>,
      input: {
        organizationId: string;
        name: string;
        description: string | null;
        region: string;
        credentialsId: string;
        dnsProvider: string;
        buildProvider: string;
        production: boolean;
        createdBy: Principal;
      },
    ): Promise<{ clusterId: string; enrollmentToken: string; enrollmentExpiresAt: string }> {
      const now = clock.now();
      const id = newId();
      const name = cleanName(input.name);
      await uniqueOrConflict(
        () =>
          insertCluster(trx, {
            id,
            organization_id: input.organizationId,
            name,
            name_key: nameKey(name),
            description: input.description,
            region: input.region,
            cloud_provider: 'AWS',
            kubernetes: 'SELF_MANAGED',
            instance_type: null,
            min_running_nodes: 1,
            max_running_nodes: 1,
            disk_size: 40,
            production: input.production ? 1 : 0,
            credentials_id: input.credentialsId,
            dns_provider: input.dnsProvider,
            build_provider: input.buildProvider,
            settings: writeJson({}),
            version: DEFAULT_KUBERNETES_VERSION,
            status: 'READY',
            status_message: null,
            deployed_revision: null,
            last_execution_id: null,
            last_deployment_date: null,
            created_at: now.toISOString(),
            updated_at: now.toISOString(),
          }),
        nameTaken(name),
      );
      const token = mintToken('enrollment');
      const expiresAt = new Date(now.getTime() + ENROLLMENT_TTL_MS).toISOString();
      await insertEnrollment(trx, { id: newId(), cluster_id: id, token_hash: token.hash, expires_at: expiresAt, created_at: now.toISOString() });
      return { clusterId: id, enrollmentToken: token.value, enrollmentExpiresAt: expiresAt };
    },

    bootstrapView(clusterId: string, enrollmentToken: string, expiresAt: string) {
      return bootstrapView(deps.publicUrl, clusterId, enrollmentToken, expiresAt);
    },

    authenticateOperator,

    /**
     * Whether an enrollment token could be used now (401 otherwise), without using it: the enrollment route asks
     * before it validates the rest of the request, so a caller without a live token learns nothing of its shape.
     * enrollOperator still uses the token up atomically; this only answers sooner.
     */
    async checkEnrollmentToken(enrollmentToken: string): Promise<void> {
      if (recogniseToken(enrollmentToken) !== 'enrollment') throw unauthenticated('invalid enrollment token');
      const usable = await isEnrollmentUsable(db, hashToken(enrollmentToken), clock.now().toISOString());
      if (!usable) throw unauthenticated('enrollment token is invalid, expired or already used');
    },

    /** An operator trades its one-time enrollment token for its own credential (shown once, stored hashed). */
    async enrollOperator(enrollmentToken: string): Promise<{ cluster_id: string; credential: string }> {
      if (recogniseToken(enrollmentToken) !== 'enrollment') throw unauthenticated('invalid enrollment token');
      const now = clock.now().toISOString();
      const credential = mintToken('operator');
      const clusterId = await db.transaction().execute(async (trx) => {
        const consumed = await consumeEnrollment(trx, hashToken(enrollmentToken), now);
        if (consumed === undefined) throw unauthenticated('enrollment token is invalid, expired or already used');
        await replaceOperator(trx, {
          cluster_id: consumed,
          credential_hash: credential.hash,
          reported_status: null,
          kubernetes_version: null,
          reported_at: null,
          enrolled_at: now,
        });
        return consumed;
      });
      return { cluster_id: clusterId, credential: credential.value };
    },

    /**
     * An enrolled operator reports on its cluster (the route authenticated it: authenticateOperator); a READY report
     * lets a waiting deploy complete.
     */
    async recordOperatorReport(clusterId: string, report: { status: string; kubernetes_version?: string | undefined }): Promise<void> {
      await recordOperatorReport(db, clusterId, {
        reported_status: report.status,
        kubernetes_version: report.kubernetes_version ?? null,
        reported_at: clock.now().toISOString(),
      });
      deps.wakeWorkers();
    },
  };
}

/** Where the agent's chart (charts/slipway-agent in this repository) is published, and its version (Chart.yaml). */
export const AGENT_CHART = { repository: 'oci://ghcr.io/slipway/charts', name: AGENT_INSTALL_NAME, version: '0.1.0' } as const;

/**
 * The reference's ClusterOperatorBootstrapResponse for the charts/slipway-agent chart: the values an install with the
 * one-time `enrollmentToken` takes (the same as getInstallationHelmValues answers), as an object and as YAML, and one
 * `helm` command that installs them. Slipway adds the cluster id and when the token expires.
 */
function bootstrapView(publicUrl: string, clusterId: string, enrollmentToken: string, expiresAt: string) {
  const values = installHelmValues({ controlPlaneUrl: publicUrl, clusterId, enrollmentToken, version: SLIPWAY_VERSION, createNamespace: false });
  const reference = `${AGENT_CHART.repository}/${AGENT_CHART.name}`;
  return {
    chart_repository: AGENT_CHART.repository,
    chart_name: AGENT_CHART.name,
    chart_version: AGENT_CHART.version,
    chart_reference: reference,
    namespace: DEFAULT_AGENT_NAMESPACE,
    release_name: AGENT_INSTALL_NAME,
    values,
    values_yaml: installHelmValuesYaml(values),
    helm_command:
      `helm upgrade --install ${AGENT_INSTALL_NAME} ${reference} --version ${AGENT_CHART.version} ` +
      `--namespace ${DEFAULT_AGENT_NAMESPACE} --create-namespace --set controlPlaneUrl=${publicUrl} --set clusterId=${clusterId} ` +
      `--set enrollmentToken=${enrollmentToken}`,
    cluster_id: clusterId,
    enrollment_token_expires_at: expiresAt,
  };
}

export type ClusterOperators = ReturnType<typeof createClusterOperators>;
