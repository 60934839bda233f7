import type { Kysely } from 'kysely';
import type { Actor, Requester, ScheduledActor } from '../../auth/principal.ts';
import { isUniqueViolation } from '../../db/db.errors.ts';
import type { DB } from '../../db/db.schema.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import { CLONEABLE_KINDS, type CloneableKind } from '../services/services.clone.ts';
import { storedGitSourceOf, type StoredGitSource } from '../services/services.git-sources.ts';
import type { StoredService } from '../services/services.kinds.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';
import type { PullRequestEvent } from './git-webhooks.deliveries.ts';
import { deletePreview, findPreview, insertPreview, touchPreview } from './git-webhooks.repo.ts';
import { repositoryKey, type PreviewOutcome, type PreviewPort } from './git-webhooks.service.ts';

/**
 * Preview environments (docs/git-webhooks.md): a pull request against the branch a service deploys, in an
 * environment whose deployment rule has auto_preview on, gets an environment of its own, cloned from that one (the
 * blueprint) through the environments and services modules' own clone operations: mode PREVIEW, the blueprint's
 * environment variables, and the blueprint's services whose auto_preview is on (databases always: the others need
 * them). The services built from the pull request's repository deploy its head commit, an application also switching
 * its branch to the pull request's; the others deploy as configured. A synchronize deploys the new head commit; a
 * close (merged or not) deletes the environment, its workloads handed to its cluster's agent to tear down.
 */

export interface PreviewsDeps {
  db: Kysely<DB>;
  clock: Clock;
  environments: {
    findEnvironmentSummary(environmentId: string): Promise<{ id: string; name: string; mode: string } | undefined>;
    cloneEnvironment(actor: Actor, environmentId: string, body: { name: string; mode: 'PREVIEW'; clone_variables: boolean }): Promise<{ id: string }>;
    deleteEnvironment(environmentId: string): Promise<void>;
  };
  deploymentRules: { getEnvironmentDeploymentRule(environmentId: string): Promise<{ auto_preview: boolean }> };
  services: {
    listEnvironmentServices(environmentId: string): Promise<StoredService[]>;
    cloneService(kind: CloneableKind, serviceId: string, body: { name: string; environment_id: string }): Promise<unknown>;
    getService(kind: ServiceKind, serviceId: string): Promise<Record<string, unknown>>;
    editService(kind: ServiceKind, serviceId: string, body: unknown): Promise<unknown>;
  };
  deployments: { deployService(requester: Requester, kind: ServiceKind, serviceId: string, input: { git_commit_id?: string }): Promise<unknown> };
}

/** Environment names are at most 255 characters; a preview's starts with its pull request. */
const MAX_NAME = 255;

function previewName(blueprintName: string, number: number): string {
  return `pr-${number}-${blueprintName}`.slice(0, MAX_NAME);
}

function isCloneable(kind: ServiceKind): kind is CloneableKind {
  return (CLONEABLE_KINDS as readonly ServiceKind[]).includes(kind);
}

/** Whether a blueprint service goes into previews: its auto_preview, or always for a database (it has none). */
function inPreviews(service: StoredService): boolean {
  return service.kind === 'DATABASE' || service.settings.auto_preview === true;
}

export function createPreviews(deps: PreviewsDeps): PreviewPort {
  const { db, clock } = deps;

  function actorFor(event: PullRequestEvent): ScheduledActor {
    return { kind: 'schedule', name: `pull request ${event.number} of ${event.repository} (git webhook)`, origin: 'GIT' };
  }

  function fromRepository(service: StoredService, repository: string): StoredGitSource | undefined {
    const source = storedGitSourceOf(service.settings);
    return source !== null && repositoryKey(source) === repository ? source : undefined;
  }

  /** An application of the pull request's repository builds the pull request's branch from now on. */
  async function switchBranch(service: StoredService, source: StoredGitSource, branch: string): Promise<void> {
    if (service.kind !== 'APPLICATION' || source.branch === branch) return;
    const current = await deps.services.getService('APPLICATION', service.id);
    await deps.services.editService('APPLICATION', service.id, { git_repository: { ...source, branch }, healthchecks: current.healthchecks });
  }

  /**
   * Deploys the preview's services: those of the repository at the pull request's head commit, the others as they
   * are. A service that another's deploy already brought along (a database its variables need) is left to that one.
   */
  async function deployPreview(environmentId: string, event: PullRequestEvent, only: 'repository' | 'all'): Promise<void> {
    const repository = event.repository.toLowerCase();
    for (const service of await deps.services.listEnvironmentServices(environmentId)) {
      const source = fromRepository(service, repository);
      if (only === 'repository' && source === undefined) continue;
      if (source !== undefined) await switchBranch(service, source, event.branch);
      const input = source !== undefined && event.commitId !== null ? { git_commit_id: event.commitId } : {};
      try {
        await deps.deployments.deployService(actorFor(event), service.kind, service.id, input);
      } catch (error) {
        if (only === 'all' && error instanceof AppError && error.kind === 'conflict') continue;
        throw error;
      }
    }
  }

  async function openPreview(blueprint: { id: string; name: string }, event: PullRequestEvent, repository: string): Promise<PreviewOutcome> {
    const environment = await deps.environments.cloneEnvironment(actorFor(event), blueprint.id, { name: previewName(blueprint.name, event.number), mode: 'PREVIEW', clone_variables: true });
    const now = isoTimestamp(clock);
    try {
      await insertPreview(db, { environment_id: environment.id, blueprint_environment_id: blueprint.id, repository, pull_request: event.number, branch: event.branch, created_at: now, updated_at: now });
    } catch (error) {
      // Another delivery of the same pull request made its preview meanwhile: that one stays, this clone goes.
      await deps.environments.deleteEnvironment(environment.id);
      if (isUniqueViolation(error)) return { outcome: 'IGNORED', message: `pull request ${event.number} already has its preview environment`, environmentId: null };
      throw error;
    }
    for (const service of await deps.services.listEnvironmentServices(blueprint.id)) {
      if (isCloneable(service.kind) && inPreviews(service)) await deps.services.cloneService(service.kind, service.id, { name: service.name, environment_id: environment.id });
    }
    await deployPreview(environment.id, event, 'all');
    return { outcome: 'PREVIEW_DEPLOYED', message: `preview environment ${previewName(blueprint.name, event.number)} created for pull request ${event.number} (${event.branch})`, environmentId: environment.id };
  }

  return {
    async pullRequestChanged(service, source, event) {
      const ignored = (message: string): PreviewOutcome => ({ outcome: 'IGNORED', message, environmentId: null });
      const blueprint = await deps.environments.findEnvironmentSummary(service.environmentId);
      if (blueprint === undefined) return ignored('the service has no environment');
      if (blueprint.mode === 'PREVIEW') return ignored('the service is itself in a preview environment');
      const repository = repositoryKey(source);
      const existing = await findPreview(db, blueprint.id, repository, event.number);
      if (event.action === 'close') {
        if (existing === undefined) return ignored(`pull request ${event.number} has no preview environment`);
        await deps.environments.deleteEnvironment(existing.environment_id);
        await deletePreview(db, existing.environment_id);
        return { outcome: 'PREVIEW_DELETED', message: `preview environment of pull request ${event.number} deleted`, environmentId: existing.environment_id };
      }
      if (existing !== undefined) {
        await deployPreview(existing.environment_id, event, 'repository');
        await touchPreview(db, existing.environment_id, isoTimestamp(clock));
        return { outcome: 'PREVIEW_DEPLOYED', message: `preview environment of pull request ${event.number} deploying ${event.commitId ?? event.branch}`, environmentId: existing.environment_id };
      }
      if (!(await deps.deploymentRules.getEnvironmentDeploymentRule(blueprint.id)).auto_preview) {
        return ignored(`preview environments are off for environment ${blueprint.name} (auto_preview of its deployment rule)`);
      }
      if (!inPreviews(service)) return ignored('auto_preview is off for this service');
      return openPreview(blueprint, event, repository);
    },
  };
}
