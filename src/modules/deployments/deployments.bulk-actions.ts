import type { Kysely } from 'kysely';
import { principalDisplayName, type Principal, type Requester } from '../../auth/principal.ts';
import type { DB } from '../../db/db.schema.ts';
import type { Clock } from '../../lib/clock.ts';
import { badRequest, conflict, notFound, type FieldProblem } from '../../lib/errors.ts';
import type { StateChangePublisher } from '../organization-changes/organization-changes.signals.ts';
import type { StoredService } from '../services/services.kinds.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';
import { writeLogLines } from './deployments.logs.ts';
import type { CleanFailedJobsBody, DeployAllBody, EnvironmentServiceIdsBody } from './deployments.queue-schemas.ts';
import { findRuntime } from './deployments.repo.ts';
import { NO_WORKLOAD_HEALTH } from './deployments.service-records.ts';
import { refuseServicesInTheWay } from './deployments.service-refusals.ts';
import type { EnvironmentStatePort } from './deployments.environment-records.ts';
import type { DeploymentsService } from './deployments.service.ts';
import { requestedState, stateOf } from './deployments.states.ts';
import type { UninstallOutcome } from './deployments.uninstall.ts';

/**
 * An environment's bulk actions (docs/deployment-queue.md, "Bulk actions"): deploy, stop, delete or uninstall the
 * services a request names, and clean the failed runs of its jobs. Each is the services' own action, asked for
 * several at once: every id is checked first — it must name a service of this environment of the list's kind (400
 * naming each one that does not, whatever organization it belongs to) and every service's state must allow the
 * action (one 409 naming each service that refuses it, and its state: deployments.service-refusals.ts) — and only then
 * is anything queued, so a refused request leaves nothing half-done. Deploy and stop write all their services'
 * deployments in one transaction (requestServicesAction), as delete and uninstall do their own writes.
 */

export interface EnvironmentBulkActionsDeps {
  db: Kysely<DB>;
  clock: Clock;
  environments: Pick<EnvironmentStatePort, 'findEnvironmentSummary' | 'deploymentStateOf' | 'moveDeploymentState'>;
  services: {
    listEnvironmentServices(environmentId: string): Promise<StoredService[]>;
    findService(serviceId: string): Promise<StoredService | undefined>;
    deleteServices(targets: ReadonlyArray<{ kind: ServiceKind; id: string }>, options: { skipReconcile?: boolean | undefined }): Promise<void>;
  };
  deployments: Pick<
    DeploymentsService,
    'requestServicesAction' | 'getEnvironmentStatus' | 'getServiceStatus' | 'uninstallServiceIn' | 'serviceUninstalled'
  >;
  /** Open pages' "look again" (organization-changes.signals.ts): a cleaned failed run changes the job's status. */
  stateChanges?: Pick<StateChangePublisher, 'serviceChanged'> | undefined;
}

/** The body's lists of ids, by kind (EnvironmentServiceIdsAllRequest). */
const ID_FIELDS = [
  ['application_ids', 'APPLICATION'],
  ['container_ids', 'CONTAINER'],
  ['database_ids', 'DATABASE'],
  ['job_ids', 'JOB'],
  ['helm_ids', 'HELM'],
  ['terraform_ids', 'TERRAFORM'],
] as const satisfies ReadonlyArray<readonly [keyof EnvironmentServiceIdsBody, ServiceKind]>;

/** One id a request names, where it names it. */
interface Named {
  id: string;
  kind: ServiceKind;
  field: string;
  input?: { git_commit_id?: string | undefined; image_tag?: string | undefined };
}

/** The services resolved from a request, each with the body field that named it (for the 409's details). */
function asked(selected: ReadonlyArray<{ service: StoredService; named: Named }>) {
  return selected.map(({ service, named }) => ({ service, field: named.field }));
}

/** What a deploy of a Helm or a Terraform may name but Slipway keeps in the service's settings (400, naming it). */
function refuseSettingsInDeploy(body: DeployAllBody): FieldProblem[] {
  const problems: FieldProblem[] = [];
  (body.helms ?? []).forEach((helm, index) => {
    if (helm.chart_version !== undefined) problems.push({ field: `/helms/${index}/chart_version`, message: "a Helm's chart version is part of its settings: edit the Helm, then deploy it" });
    if (helm.values_override_git_commit_id !== undefined) {
      problems.push({ field: `/helms/${index}/values_override_git_commit_id`, message: "a Helm's values are part of its settings: edit the Helm, then deploy it" });
    }
  });
  (body.terraforms ?? []).forEach((terraform, index) => {
    if (terraform.action !== undefined && terraform.action !== null) {
      problems.push({ field: `/terraforms/${index}/action`, message: 'a deploy applies the Terraform; PLAN, FORCE_UNLOCK and MIGRATE_STATE are not deploys here' });
    }
  });
  return problems;
}

/** The ids a deploy names, with the commit or tag each is deployed at. */
function namedInDeploy(body: DeployAllBody): Named[] {
  return [
    ...(body.applications ?? []).map((entry, index) => ({ id: entry.application_id, kind: 'APPLICATION' as const, field: `/applications/${index}/application_id`, input: { git_commit_id: entry.git_commit_id } })),
    ...(body.databases ?? []).map((id, index) => ({ id, kind: 'DATABASE' as const, field: `/databases/${index}` })),
    ...(body.containers ?? []).map((entry, index) => ({ id: entry.id, kind: 'CONTAINER' as const, field: `/containers/${index}/id`, input: { image_tag: entry.image_tag } })),
    ...(body.jobs ?? []).map((entry, index) => ({ id: entry.id, kind: 'JOB' as const, field: `/jobs/${index}/id`, input: { git_commit_id: entry.git_commit_id, image_tag: entry.image_tag } })),
    ...(body.helms ?? []).map((entry, index) => ({ id: entry.id, kind: 'HELM' as const, field: `/helms/${index}/id`, input: { git_commit_id: entry.git_commit_id } })),
    ...(body.terraforms ?? []).map((entry, index) => ({ id: entry.id, kind: 'TERRAFORM' as const, field: `/terraforms/${index}/id`, input: { git_commit_id: entry.git_commit_id } })),
  ].map((named) => ('input' in named ? { ...named, input: withoutUndefined(named.input) } : named));
}

function withoutUndefined(input: { git_commit_id?: string | undefined; image_tag?: string | undefined }) {
  return {
    ...(input.git_commit_id === undefined ? {} : { git_commit_id: input.git_commit_id }),
    ...(input.image_tag === undefined ? {} : { image_tag: input.image_tag }),
  };
}

function namedInIds(body: EnvironmentServiceIdsBody): Named[] {
  return ID_FIELDS.flatMap(([field, kind]) => (body[field] ?? []).map((id, index) => ({ id, kind, field: `/${field}/${index}` })));
}

export function createEnvironmentBulkActions(deps: EnvironmentBulkActionsDeps) {
  const { db, clock } = deps;

  async function requireEnvironment(environmentId: string): Promise<void> {
    if ((await deps.environments.findEnvironmentSummary(environmentId)) === undefined) throw notFound(`environment ${environmentId} not found`);
  }

  /** Every service of the environment (404 when there is no such environment). */
  async function allServicesOf(environmentId: string): Promise<StoredService[]> {
    await requireEnvironment(environmentId);
    return deps.services.listEnvironmentServices(environmentId);
  }

  /**
   * The services the ids name, in the order named: each must be a service of this environment of its list's kind,
   * and named once (400 naming every id that is not).
   */
  async function resolve(environmentId: string, named: readonly Named[]): Promise<Array<{ service: StoredService; named: Named }>> {
    await requireEnvironment(environmentId);
    const services = new Map((await deps.services.listEnvironmentServices(environmentId)).map((service) => [service.id, service]));
    const seen = new Set<string>();
    const problems: FieldProblem[] = [];
    const resolved: Array<{ service: StoredService; named: Named }> = [];
    for (const entry of named) {
      const service = services.get(entry.id);
      if (service === undefined || service.kind !== entry.kind) {
        problems.push({ field: entry.field, message: `no ${entry.kind.toLowerCase()} ${entry.id} in this environment` });
      } else if (seen.has(entry.id)) {
        problems.push({ field: entry.field, message: `${entry.kind.toLowerCase()} ${entry.id} is named twice` });
      } else {
        seen.add(entry.id);
        resolved.push({ service, named: entry });
      }
    }
    if (problems.length > 0) throw badRequest('unknown services', problems);
    return resolved;
  }

  async function resolveSelection(environmentId: string, body: EnvironmentServiceIdsBody) {
    const named = namedInIds(body);
    if (named.length === 0) {
      throw badRequest('no services named', ID_FIELDS.map(([field]) => ({ field: `/${field}`, message: 'name the services to act on in at least one of the lists' })));
    }
    return resolve(environmentId, named);
  }

  /** A JOB whose running workload its agent reported FAILED: its last run failed. */
  async function failedRunOf(service: StoredService) {
    if (service.kind !== 'JOB') return undefined;
    const runtime = await findRuntime(db, service.id);
    return runtime?.workload_health === 'FAILED' ? runtime : undefined;
  }

  /** Forgets a job's failed run: its workload report is cleared (a compare-and-set) and its deployment's log says who did it. */
  async function cleanFailedRun(principal: Principal, service: StoredService): Promise<boolean> {
    const runtime = await failedRunOf(service);
    if (runtime === undefined) return false;
    return db.transaction().execute(async (trx) => {
      const changes = { ...NO_WORKLOAD_HEALTH, updated_at: clock.now().toISOString() };
      const cleaned = await trx
        .updateTable('service_runtime')
        .set(changes)
        .where('service_id', '=', service.id)
        .where('status', '=', runtime.status)
        .where('workload_health', '=', 'FAILED')
        .executeTakeFirst();
      if (cleaned.numUpdatedRows === 0n) return false;
      await deps.stateChanges?.serviceChanged(trx, service.id);
      if (runtime.deployed_deployment_id !== null) {
        await writeLogLines(trx, clock, runtime.deployed_deployment_id, [
          { stream: 'system', message: `failed run cleaned by ${principalDisplayName(principal)}: ${runtime.workload_message ?? 'no message'}` },
        ]);
      }
      return true;
    });
  }

  return {
    /**
     * Deploys the services named (each at the commit or tag given), or every service of the environment when none
     * is named, in one transaction; answers the environment's status.
     */
    async deployAllServices(requester: Requester, environmentId: string, body: DeployAllBody) {
      const refused = refuseSettingsInDeploy(body);
      if (refused.length > 0) throw badRequest('fields a deploy does not take here', refused);
      const named = namedInDeploy(body);
      const resolved = named.length === 0 ? (await allServicesOf(environmentId)).map((service) => ({ service, named: undefined })) : await resolve(environmentId, named);
      await refuseServicesInTheWay(db, 'deploy', resolved.map(({ service, named: entry }) => ({ service, field: entry?.field })));
      const targets = resolved.map(({ service, named: entry }) => ({ service, ...(entry?.input === undefined ? {} : { input: entry.input }) }));
      await deps.deployments.requestServicesAction(requester, 'deploy', targets);
      return deps.deployments.getEnvironmentStatus(environmentId);
    },

    /** Stops the deployed services named, in one transaction; answers their statuses. */
    async stopSelectedServices(requester: Requester, environmentId: string, body: EnvironmentServiceIdsBody) {
      const selected = await resolveSelection(environmentId, body);
      await refuseServicesInTheWay(db, 'stop', asked(selected));
      return { results: await deps.deployments.requestServicesAction(requester, 'stop', selected.map(({ service }) => ({ service }))) };
    },

    /**
     * Deletes the services named, as each one's delete does (their workloads torn down unless skipReconcile), in one
     * transaction: all or none. Every service in a state that cannot be deleted is named (one 409); one the agent
     * took up meanwhile is refused by the delete's own check, inside the transaction.
     */
    async deleteSelectedServices(environmentId: string, body: EnvironmentServiceIdsBody, options: { skipReconcile?: boolean | undefined }) {
      const selected = await resolveSelection(environmentId, body);
      await refuseServicesInTheWay(db, 'delete', asked(selected));
      await deps.services.deleteServices(selected.map(({ service }) => ({ kind: service.kind, id: service.id })), options);
      return { results: selected.map(({ service }) => ({ id: service.id, service_type: service.kind, name: service.name })) };
    },

    /**
     * Uninstalls the services named, in one transaction (all or none; 409 while an action on one is queued or under
     * way): each one's workloads go (its teardown is queued for the agent), its record and configuration stay, and it
     * reads READY, never deployed. Answers their statuses.
     */
    async uninstallSelectedServices(principal: Principal, environmentId: string, body: EnvironmentServiceIdsBody) {
      const selected = await resolveSelection(environmentId, body);
      await refuseServicesInTheWay(db, 'uninstall', asked(selected));
      const triggeredBy = principalDisplayName(principal);
      const outcomes = await db.transaction().execute(async (trx) => {
        const done: Array<[string, UninstallOutcome]> = [];
        for (const { service } of selected) done.push([service.id, await deps.deployments.uninstallServiceIn(trx, service.id, triggeredBy)]);
        return done;
      });
      for (const [serviceId, outcome] of outcomes) await deps.deployments.serviceUninstalled(serviceId, outcome);
      return { results: await Promise.all(selected.map(({ service }) => deps.deployments.getServiceStatus(service.kind, service.id))) };
    },

    /**
     * Uninstalls the environment: every one of its services as uninstallSelectedServices does, and the environment
     * itself reads READY, never deployed — in one transaction, refused (409) while an action on the environment or on
     * one of its services is queued or under way. The environment, its services and their configuration stay.
     */
    async uninstallEnvironment(principal: Principal, environmentId: string) {
      const services = await allServicesOf(environmentId);
      const triggeredBy = principalDisplayName(principal);
      const outcomes = await db.transaction().execute(async (trx) => {
        const current = await deps.environments.deploymentStateOf(trx, environmentId);
        if (current === undefined) throw notFound(`environment ${environmentId} not found`);
        const from = stateOf('environment', current.id, current.status);
        const to = requestedState('environment', from, 'uninstall', current.deployed_revision !== null);
        const done: Array<[string, UninstallOutcome]> = [];
        for (const service of services) done.push([service.id, await deps.deployments.uninstallServiceIn(trx, service.id, triggeredBy)]);
        const moved = await deps.environments.moveDeploymentState(trx, environmentId, from, { status: to, deployed_revision: null, updated_at: clock.now().toISOString() });
        if (!moved) throw conflict('cannot uninstall environment: its state changed meanwhile; read it again');
        return done;
      });
      for (const [serviceId, outcome] of outcomes) await deps.deployments.serviceUninstalled(serviceId, outcome);
      return deps.deployments.getEnvironmentStatus(environmentId);
    },

    /** Cleans the failed runs of the jobs named, or of every job of the environment; answers the jobs cleaned. */
    async cleanFailedJobs(principal: Principal, environmentId: string, body: CleanFailedJobsBody) {
      const jobs =
        body.job_ids === undefined
          ? (await allServicesOf(environmentId)).filter((service) => service.kind === 'JOB')
          : (await resolve(environmentId, body.job_ids.map((id, index) => ({ id, kind: 'JOB' as const, field: `/job_ids/${index}` })))).map(({ service }) => service);
      const cleaned: string[] = [];
      for (const job of jobs) if (await cleanFailedRun(principal, job)) cleaned.push(job.id);
      return { clean_job_ids: cleaned, clean_kubernetes_jobs: [] as string[] };
    },

    /** Cleans one job's failed run (nothing to do when its last run did not fail). */
    async cleanFailedJob(principal: Principal, jobId: string) {
      const job = await deps.services.findService(jobId);
      if (job === undefined || job.kind !== 'JOB') throw notFound(`job ${jobId} not found`);
      await cleanFailedRun(principal, job);
      return { clean_kubernetes_jobs: [] as string[] };
    },
  };
}

export type EnvironmentBulkActions = ReturnType<typeof createEnvironmentBulkActions>;
