import type { Kysely } from 'kysely';
import { wireAction } from '../../engine/deployment-states.ts';
import type { DB } from '../../db/db.schema.ts';
import type { Clock } from '../../lib/clock.ts';
import { badRequest, notFound } from '../../lib/errors.ts';
import { countDeploymentsNewerThan, findDeployment, findEnvironment, listDeploymentsPage, type EnvironmentDeploymentRow } from './environments.repo.ts';
import { MAX_PAGE_SIZE } from './environments.schemas.ts';
import { actionStatusOf, stateOf } from './environments.states.ts';

/**
 * An environment's deployment history, newest first, a page at a time: the reference's two listings (the older
 * `deploymentHistory` and `deploymentHistoryV2`) over the same records and the same keyset cursor.
 */

const DEFAULT_PAGE_SIZE = 20;

/** ISO-8601 duration of a deployment: until it finished, or until now while it runs or waits. */
export function durationSeconds(record: EnvironmentDeploymentRow, now: Date): number {
  const end = record.finished_at === null ? now.getTime() : new Date(record.finished_at).getTime();
  return Math.max(0, (end - new Date(record.created_at).getTime()) / 1000);
}

export function createEnvironmentHistory(deps: { db: Kysely<DB>; clock: Clock }) {
  const { db, clock } = deps;

  async function historyPage(environmentId: string, pageSize: number | undefined, cursor: string | undefined, cursorField: string) {
    const size = pageSize ?? DEFAULT_PAGE_SIZE;
    if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) {
      throw badRequest('invalid pageSize', [{ field: '/pageSize', message: `must be an integer from 1 to ${MAX_PAGE_SIZE}` }]);
    }
    if ((await findEnvironment(db, environmentId)) === undefined) throw notFound(`environment ${environmentId} not found`);
    if (cursor !== undefined) {
      const at = await findDeployment(db, cursor);
      if (at === undefined || at.environment_id !== environmentId) {
        throw badRequest('invalid cursor', [{ field: cursorField, message: 'names no deployment of this environment' }]);
      }
    }
    const rows = await listDeploymentsPage(db, environmentId, size + 1, cursor);
    const page = rows.slice(0, size);
    const before = cursor === undefined ? 0 : (await countDeploymentsNewerThan(db, environmentId, cursor)) + 1;
    return {
      rows: page,
      page: Math.floor(before / size) + 1,
      page_size: size,
      next_cursor: rows.length > size ? (page[page.length - 1]?.id ?? null) : null,
    };
  }

  return {
    async listEnvironmentDeploymentHistory(environmentId: string, query: { startId?: string | undefined; pageSize?: number | undefined }) {
      const page = await historyPage(environmentId, query.pageSize, query.startId, '/startId');
      return {
        page: page.page,
        page_size: page.page_size,
        next_cursor: page.next_cursor,
        results: page.rows.map((r) => ({
          id: r.id,
          created_at: r.created_at,
          updated_at: r.updated_at,
          status: stateOf({ id: r.id, status: r.status }),
          origin: r.origin as 'API',
          triggered_by: r.triggered_by,
          applications: [],
          containers: [],
          databases: [],
          jobs: [],
          helms: [],
        })),
      };
    },

    async listEnvironmentDeploymentHistoryV2(environmentId: string, query: { cursor?: string | undefined; pageSize?: number | undefined }) {
      const page = await historyPage(environmentId, query.pageSize, query.cursor, '/cursor');
      const now = clock.now();
      return {
        page: page.page,
        page_size: page.page_size,
        next_cursor: page.next_cursor,
        results: page.rows.map((r) => {
          const status = stateOf({ id: r.id, status: r.status });
          return {
            identifier: { execution_id: r.job_id, environment_id: r.environment_id },
            auditing_data: { created_at: r.created_at, updated_at: r.updated_at, triggered_by: r.triggered_by, origin: r.origin as 'API' },
            status,
            trigger_action: wireAction(r.action),
            total_duration: `PT${durationSeconds(r, now).toFixed(3)}S`,
            stages: [],
            action_status: actionStatusOf(status),
            message: r.message,
          };
        }),
      };
    },
  };
}
