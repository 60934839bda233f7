import type { Kysely } from 'kysely';
import { Type, type Static } from 'typebox';
import type { DB } from '../../db/db.schema.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { badRequest, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { csvOf } from '../billing/billing.pdf.ts';

/**
 * The build usage report of one deployment execution (generateDeploymentBuildUsageReport, docs/service-insights.md):
 * a CSV of the service deployments the execution ran — an environment action's whole fan-out, or one service's own
 * deployment — with their action, outcome, and when each was queued and finished and how long it took. It is written
 * once, kept until `report_expiration_in_seconds` have passed, read at report_url and removed at delete_report_url
 * (both API routes of the environment: the caller's credential opens them, as any other call of the environment).
 */

const MAX_REPORT_LIFETIME_SECONDS = 7 * 24 * 3600;

export const DeploymentBuildUsageReportRequest = Type.Object(
  {
    execution_id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[0-9a-f-]+$', description: "A deployment's execution id (its status's execution_id)." }),
    report_expiration_in_seconds: Type.Integer({ minimum: 1, maximum: MAX_REPORT_LIFETIME_SECONDS }),
  },
  { $id: 'DeploymentBuildUsageReportRequest', additionalProperties: false },
);
export type DeploymentBuildUsageReportBody = Static<typeof DeploymentBuildUsageReportRequest>;
export const DeploymentBuildUsageReportResponse = Type.Object(
  { report_url: Type.String(), delete_report_url: Type.String() },
  { $id: 'DeploymentBuildUsageReportResponse' },
);

export interface BuildUsageReportsDeps {
  db: Kysely<DB>;
  clock: Clock;
  /** The API's public URL, which the report links start with. */
  publicUrl: string;
  /** The environment's organization; undefined for an unknown environment. */
  organizationOf(environmentId: string): Promise<string | undefined>;
}

function seconds(from: string, to: string | null): string {
  return to === null ? '' : String(Math.max(0, Math.round((Date.parse(to) - Date.parse(from)) / 1000)));
}

export function createBuildUsageReports(deps: BuildUsageReportsDeps) {
  const { db, clock } = deps;

  function reportPath(environmentId: string, reportId: string): string {
    return `${deps.publicUrl.replace(/\/+$/, '')}/environment/${environmentId}/deploymentBuildUsageReport/${reportId}`;
  }

  async function requireReport(environmentId: string, reportId: string) {
    const row = await db
      .selectFrom('deployment_build_usage_reports')
      .selectAll()
      .where('environment_id', '=', environmentId)
      .where('id', '=', reportId)
      .where('expires_at', '>', isoTimestamp(clock))
      .executeTakeFirst();
    if (row === undefined) throw notFound(`report ${reportId} not found (or expired)`);
    return row;
  }

  return {
    async generateReport(environmentId: string, body: DeploymentBuildUsageReportBody): Promise<Static<typeof DeploymentBuildUsageReportResponse>> {
      const organizationId = await deps.organizationOf(environmentId);
      if (organizationId === undefined) throw notFound(`environment ${environmentId} not found`);
      const action = await db.selectFrom('environment_deployments').select('id').where('environment_id', '=', environmentId).where('job_id', '=', body.execution_id).executeTakeFirst();
      let query = db
        .selectFrom('service_deployments')
        .innerJoin('services', 'services.id', 'service_deployments.service_id')
        .select(['services.id as service_id', 'services.name', 'services.kind', 'service_deployments.action', 'service_deployments.status', 'service_deployments.created_at', 'service_deployments.finished_at'])
        .where('services.environment_id', '=', environmentId);
      query = action === undefined ? query.where('service_deployments.job_id', '=', body.execution_id) : query.where('service_deployments.environment_deployment_id', '=', action.id);
      const rows = await query.orderBy('service_deployments.created_at').orderBy('service_deployments.id').execute();
      if (action === undefined && rows.length === 0) {
        throw badRequest(`no deployment of this environment has the execution id ${body.execution_id}`, [{ field: '/execution_id', message: 'unknown execution' }]);
      }
      const csv = csvOf(
        ['service_id', 'service_name', 'service_type', 'action', 'status', 'queued_at', 'finished_at', 'duration_seconds'],
        rows.map((row) => [row.service_id, row.name, row.kind, row.action, row.status, row.created_at, row.finished_at ?? '', seconds(row.created_at, row.finished_at)]),
      );
      const now = clock.now();
      const id = newId();
      await db.deleteFrom('deployment_build_usage_reports').where('expires_at', '<=', now.toISOString()).execute();
      await db
        .insertInto('deployment_build_usage_reports')
        .values({
          id,
          organization_id: organizationId,
          environment_id: environmentId,
          execution_id: body.execution_id,
          csv,
          expires_at: new Date(now.getTime() + body.report_expiration_in_seconds * 1000).toISOString(),
          created_at: now.toISOString(),
        })
        .execute();
      const url = reportPath(environmentId, id);
      return { report_url: url, delete_report_url: url };
    },

    async downloadReport(environmentId: string, reportId: string): Promise<{ filename: string; content: string }> {
      const row = await requireReport(environmentId, reportId);
      return { filename: `build-usage-${row.execution_id}.csv`, content: row.csv };
    },

    async deleteReport(environmentId: string, reportId: string): Promise<void> {
      await requireReport(environmentId, reportId);
      await db.deleteFrom('deployment_build_usage_reports').where('environment_id', '=', environmentId).where('id', '=', reportId).execute();
    },
  };
}

export type BuildUsageReports = ReturnType<typeof createBuildUsageReports>;
