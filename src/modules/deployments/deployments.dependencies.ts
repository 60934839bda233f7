import { transitionOf, type DeploymentState } from '../../engine/deployment-states.ts';
import { AppError } from '../../lib/errors.ts';
import type { StoredService } from '../services/services.kinds.ts';
import { builtInKeysOf } from '../variables/variables.builtins.ts';
import { serviceStateOf, type ServiceRecords } from './deployments.service-records.ts';
import type { DeploymentsDeps } from './deployments.service.ts';

/**
 * What a service needs through its variables (docs/service-deployments.md, "Dependencies"): a deploy brings along
 * the needed services that were never deployed (deployments.requests.ts), and warns about those their user stopped.
 */

/** Why a service needs another: one of its variables is an alias that ends at the other's built-in. */
export interface DependencyUse {
  service: StoredService;
  /** `DATABASE_URL → PLATFORM_DATABASE_MAIN_CONNECTION_URI`, as its consumer's variables say it. */
  via: string;
  /** The service whose variable it is. */
  neededBy: StoredService;
}

/** States of a service that was deployed and then stopped by its user: a dependency left as it is, with a warning. */
const STOPPED_ON_PURPOSE: ReadonlySet<DeploymentState> = new Set(['STOPPING', 'STOPPED']);

export function describeService(service: Pick<StoredService, 'kind' | 'name'>): string {
  return `${service.kind.toLowerCase().replace('_', ' ')} ${service.name}`;
}

/**
 * The services this one needs through its variables (docs/service-deployments.md, "Dependencies"): an alias whose
 * chain ends at another service's built-in (a database's connection, an application's hostname), followed through
 * the needed services' own variables. Answers those never deployed (the ones a deploy brings along, unless their
 * first deployment is already under way) and those deployed and then stopped by their user (left as they are).
 */
export async function dependenciesOf(
  deps: Pick<DeploymentsDeps, 'db' | 'services' | 'variables'>,
  records: Pick<ServiceRecords, 'runtimeOf'>,
  service: StoredService,
): Promise<{ neverDeployed: DependencyUse[]; stopped: DependencyUse[] }> {
  const neighbours = await deps.services.listEnvironmentServices(service.environmentId);
  const providerOf = new Map<string, StoredService>();
  for (const neighbour of neighbours) for (const key of builtInKeysOf(neighbour)) providerOf.set(key, neighbour);
  const neverDeployed: DependencyUse[] = [];
  const stopped: DependencyUse[] = [];
  const seen = new Set([service.id]);
  const consumers = [service];
  // An array's iterator reaches the elements pushed while it runs: the needed services' own needs are followed too.
  for (const consumer of consumers) {
    // Databases consume no variables.
    if (consumer.kind === 'DATABASE') continue;
    const { results } = await deps.variables.explain(consumer.environmentId, consumer.id, false);
    for (const variable of results) {
      const holder = variable.alias_chain.at(-1);
      // Every built-in is visible to every service: only an alias of one says that the service uses it.
      if (variable.alias_chain.length < 2 || holder === undefined || holder.scope !== 'BUILT_IN') continue;
      const provider = providerOf.get(holder.key);
      if (provider === undefined || seen.has(provider.id)) continue;
      seen.add(provider.id);
      const use = { service: provider, via: `${variable.key} → ${holder.key}`, neededBy: consumer };
      const runtime = await records.runtimeOf(deps.db, provider.id);
      const state = serviceStateOf(runtime);
      if (runtime.deployed_deployment_id !== null) {
        if (STOPPED_ON_PURPOSE.has(state)) stopped.push(use);
        continue;
      }
      // A first deployment already queued or under way comes before this one in the mailbox anyway.
      if (transitionOf(state, 'deploy') === undefined) continue;
      neverDeployed.push(use);
      consumers.push(provider);
    }
  }
  return { neverDeployed, stopped };
}

/** A needed service's refusal, naming it and why it was needed (same kind and fields). */
export function dependencyRefusal(error: unknown, use: DependencyUse): unknown {
  if (!(error instanceof AppError)) return error;
  const cause = `cannot deploy ${describeService(use.service)}, which ${use.neededBy.name} needs (${use.via}) and which was never deployed: ${error.message}`;
  return new AppError(error.kind, cause, error.details);
}
