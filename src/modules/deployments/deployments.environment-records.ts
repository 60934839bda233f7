import type { Transaction } from 'kysely';
import { referenceStatus } from '../../engine/deployment-states.ts';
import type { DB, Queryable } from '../../db/db.schema.ts';
import { notFound } from '../../lib/errors.ts';
import type { RequestOrigin } from '../../lib/request-origin.ts';
import type { EnvironmentSummary } from '../environments/environments.service.ts';
import { findEnvironmentDeployment, type EnvironmentDeploymentRow } from './deployments.repo.ts';
import type { DeploymentsDeps } from './deployments.service.ts';
import { durationSeconds, stateOf } from './deployments.states.ts';

/**
 * What every part of the environment deployments reads: the environment's place in the state machine (columns of
 * its row, which the environments module owns and moves on this module's behalf: EnvironmentStatePort), its
 * deployment records, and its two status views.
 */

/** An environment's row as the state machine sees it. */
export interface EnvironmentDeploymentState {
  id: string;
  organization_id: string;
  cluster_id: string;
  status: string;
  /** Bumped by every change a deployment carries; OUT_OF_DATE compares it with the one last deployed. */
  config_revision: number;
  deployed_revision: number | null;
  last_deployment_id: string | null;
  updated_at: string;
}

/**
 * What a move writes of an environment's row: its state, and the action it describes or the revision it deployed
 * (null: nothing of it is deployed any more, after an uninstall).
 */
export interface EnvironmentStateChanges {
  status: string;
  updated_at: string;
  last_deployment_id?: string;
  deployed_revision?: number | null;
}

/** The environments module's port: its rows, read and moved (a compare-and-set on the state) in the caller's transaction. */
export interface EnvironmentStatePort {
  findEnvironmentSummary(environmentId: string): Promise<EnvironmentSummary | undefined>;
  deploymentStateOf(executor: Queryable, environmentId: string): Promise<EnvironmentDeploymentState | undefined>;
  moveDeploymentState(trx: Transaction<DB>, environmentId: string, expectedStatus: string, changes: EnvironmentStateChanges): Promise<boolean>;
}

function deploymentStatusOf(row: EnvironmentDeploymentState): 'NEVER_DEPLOYED' | 'UP_TO_DATE' | 'OUT_OF_DATE' {
  if (row.deployed_revision === null) return 'NEVER_DEPLOYED';
  return row.deployed_revision === row.config_revision ? 'UP_TO_DATE' : 'OUT_OF_DATE';
}

export function createEnvironmentRecords(deps: Pick<DeploymentsDeps, 'db' | 'clock' | 'environments'>) {
  const { db, clock } = deps;

  async function requireEnvironment(executor: Queryable, environmentId: string): Promise<EnvironmentDeploymentState> {
    const row = await deps.environments.deploymentStateOf(executor, environmentId);
    if (row === undefined) throw notFound(`environment ${environmentId} not found`);
    return row;
  }

  async function lastDeployment(row: EnvironmentDeploymentState, executor: Queryable = db): Promise<EnvironmentDeploymentRow | undefined> {
    return row.last_deployment_id === null ? undefined : findEnvironmentDeployment(executor, row.last_deployment_id);
  }

  /** The reference's EnvironmentStatus, which most of an environment's actions answer. */
  async function statusView(row: EnvironmentDeploymentState) {
    const state = stateOf('environment', row.id, row.status);
    const last = await lastDeployment(row);
    return {
      id: row.id,
      state,
      last_deployment_date: last?.created_at ?? null,
      last_deployment_state: last === undefined ? state : stateOf('environment', last.id, last.status),
      last_deployment_id: last?.job_id ?? null,
      total_deployment_duration_in_seconds: last?.finished_at ? Math.round(durationSeconds(last, clock.now())) : null,
      origin: (last?.origin ?? null) as RequestOrigin | null,
      triggered_by: last?.triggered_by ?? null,
      deployment_status: deploymentStatusOf(row),
      deployment_request_id: last?.id ?? null,
      metrics: null,
      /** Slipway's addition: why the environment waits or failed. */
      message: last?.message ?? null,
    };
  }

  /** The reference's service-shaped Status, which deployEnvironment and rebootServices answer. */
  async function actionStatusView(row: EnvironmentDeploymentState) {
    const last = await lastDeployment(row);
    return { ...referenceStatus(row.id, stateOf('environment', row.id, row.status), deploymentStatusOf(row), last), message: last?.message ?? null };
  }

  return { requireEnvironment, lastDeployment, statusView, actionStatusView };
}

export type EnvironmentRecords = ReturnType<typeof createEnvironmentRecords>;
export type EnvironmentStatusView = Awaited<ReturnType<EnvironmentRecords['statusView']>>;
