import { refusalOf, type DeploymentAction } from '../../engine/deployment-states.ts';
import { conflict, type FieldProblem } from '../../lib/errors.ts';
import type { StoredService } from '../services/services.kinds.ts';
import { describeService } from './deployments.dependencies.ts';
import type { Queryable } from '../../db/db.schema.ts';
import { findRuntime } from './deployments.repo.ts';
import { serviceStateOf } from './deployments.service-records.ts';

/**
 * The refusal of an action asked of several services at once (an environment's bulk actions, rebootServices naming
 * services): every service is looked at before anything is written, and one 409 names each service whose state
 * refuses the action — by kind, name and id, with its state — so the caller can act on each of them, and says that
 * nothing was done. Its details point at where the request named each service (the body's field), as a 400's do;
 * a service the request did not name (a deploy of every service) is told in the message only.
 */

/** A service an action is asked of, and the body field that named it (absent when the request named none). */
export interface ServiceAsked {
  service: StoredService;
  field?: string | undefined;
}

/** What a refused request left undone, by action: queued actions queue nothing, the others change nothing. */
const NOTHING_DONE: Record<DeploymentAction, string> = {
  deploy: 'nothing was queued',
  redeploy: 'nothing was queued',
  stop: 'nothing was queued',
  restart: 'nothing was queued',
  cancel: 'nothing was canceled',
  delete: 'nothing was deleted',
  uninstall: 'nothing was uninstalled',
};

/** The service as a refusal names it: "application web (0195a3c2-…)". */
function serviceNamed(service: StoredService): string {
  return `${describeService(service)} (${service.id})`;
}

/**
 * Throws one 409 naming every service of `asked` whose state refuses `action` now (its state read outside any
 * transaction: the write that follows checks each again, so a change meanwhile is still refused); returns when none does.
 */
export async function refuseServicesInTheWay(db: Queryable, action: DeploymentAction, asked: readonly ServiceAsked[]): Promise<void> {
  const refused: Array<{ entry: ServiceAsked; why: string }> = [];
  for (const entry of asked) {
    const runtime = await findRuntime(db, entry.service.id);
    // A service never acted on has no runtime row: it is READY and was never deployed.
    const why = refusalOf(runtime === undefined ? 'READY' : serviceStateOf(runtime), action, (runtime?.deployed_deployment_id ?? null) !== null);
    if (why !== undefined) refused.push({ entry, why: `${serviceNamed(entry.service)} ${why}` });
  }
  if (refused.length === 0) return;
  const which = asked.length === 1 ? 'the service' : refused.length === asked.length ? `the ${asked.length} services` : `${refused.length} of the ${asked.length} services`;
  const details: FieldProblem[] = refused.flatMap(({ entry, why }) => (entry.field === undefined ? [] : [{ field: entry.field, message: why }]));
  throw conflict(`cannot ${action} ${which}: ${refused.map(({ why }) => why).join('; ')}; ${NOTHING_DONE[action]}`, details);
}
