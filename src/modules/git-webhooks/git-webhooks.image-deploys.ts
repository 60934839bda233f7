import type { Kysely } from 'kysely';
import type { Requester } from '../../auth/principal.ts';
import type { DB } from '../../db/db.schema.ts';
import { AppError, badRequest, type AppErrorKind, type FieldProblem } from '../../lib/errors.ts';
import type { StoredService } from '../services/services.kinds.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';
import { serviceIdsOfKinds } from './git-webhooks.repo.ts';

/**
 * Deploys on a registry push (autoDeployContainerEnvironments, previewContainerEnvironments,
 * autoDeployJobEnvironments; docs/git-webhooks.md): a CI that pushed a new tag of an image names it, and every
 * container (or job run from an image) of the organization using that image whose flag is on is deployed with the
 * tag through the deployments module's own deploy. auto_deploy counts outside PREVIEW environments, auto_preview
 * inside them. Each service is its own deploy: one refused (busy, billing, a LOCAL cluster's grant) is skipped and
 * named, the others go on.
 */

export interface ImageDeploysDeps {
  db: Kysely<DB>;
  services: { findService(serviceId: string): Promise<StoredService | undefined> };
  environments: { findEnvironmentSummary(environmentId: string): Promise<{ mode: string } | undefined> };
  deployments: { deployService(requester: Requester, kind: ServiceKind, serviceId: string, input: { image_tag?: string }): Promise<unknown> };
}

export interface ImageBody {
  image_name?: string | undefined;
  tag?: string | undefined;
}

/** What deploying one image answers: the reference's Status, for the organization (Slipway's `message` names what happened). */
export interface ImageDeployStatus {
  id: string;
  state: 'QUEUED' | 'READY';
  service_deployment_status: 'UP_TO_DATE';
  is_part_last_deployment: boolean;
  status_details: { action: 'DEPLOY'; status: 'QUEUED' | 'NEVER'; sub_action: 'NONE' };
  deployment_request_id: null;
  deployment_requests_count: number;
  message: string | null;
}

/** Refusals of one service's deploy that skip it rather than fail the whole request. */
const SKIPPED_REFUSALS: ReadonlySet<AppErrorKind> = new Set(['conflict', 'payment_required', 'forbidden']);

type Flag = 'auto_deploy' | 'auto_preview';

/** The image a container or job runs, when it runs one from a registry. */
function imageOf(service: StoredService): string | undefined {
  if (service.kind === 'CONTAINER') return typeof service.settings.image_name === 'string' ? service.settings.image_name : undefined;
  const source = service.settings.source as { kind?: string; image_name?: unknown } | null | undefined;
  return source?.kind === 'image' && typeof source.image_name === 'string' ? source.image_name : undefined;
}

function requiredImage(body: ImageBody): { imageName: string; tag: string } {
  const problems: FieldProblem[] = [];
  if (body.image_name === undefined) problems.push({ field: '/image_name', message: 'required: the image whose tag was pushed' });
  if (body.tag === undefined) problems.push({ field: '/tag', message: 'required: the tag that was pushed' });
  if (body.image_name === undefined || body.tag === undefined) throw badRequest('image_name and tag name the image pushed: both are required', problems);
  return { imageName: body.image_name, tag: body.tag };
}

export function createImageDeploys(deps: ImageDeploysDeps) {
  async function deployImage(requester: Requester, organizationId: string, kind: 'CONTAINER' | 'JOB', flag: Flag, body: ImageBody): Promise<ImageDeployStatus> {
    const { imageName, tag } = requiredImage(body);
    const deployed: string[] = [];
    const skipped: string[] = [];
    for (const serviceId of await serviceIdsOfKinds(deps.db, organizationId, [kind])) {
      const service = await deps.services.findService(serviceId);
      if (service === undefined || imageOf(service) !== imageName || service.settings[flag] !== true) continue;
      const environment = await deps.environments.findEnvironmentSummary(service.environmentId);
      if (environment === undefined || (environment.mode === 'PREVIEW') !== (flag === 'auto_preview')) continue;
      try {
        await deps.deployments.deployService(requester, service.kind, service.id, { image_tag: tag });
        deployed.push(service.name);
      } catch (error) {
        if (!(error instanceof AppError) || !SKIPPED_REFUSALS.has(error.kind)) throw error;
        skipped.push(`${service.name} (${error.message})`);
      }
    }
    const noun = kind === 'CONTAINER' ? 'container' : 'job';
    const parts = [
      deployed.length === 0 ? `no ${noun} with ${flag} on runs ${imageName}` : `deploying ${imageName}:${tag} to ${deployed.join(', ')}`,
      ...(skipped.length === 0 ? [] : [`skipped ${skipped.join('; ')}`]),
    ];
    return {
      id: organizationId,
      state: deployed.length === 0 ? 'READY' : 'QUEUED',
      service_deployment_status: 'UP_TO_DATE',
      is_part_last_deployment: false,
      status_details: { action: 'DEPLOY', status: deployed.length === 0 ? 'NEVER' : 'QUEUED', sub_action: 'NONE' },
      deployment_request_id: null,
      deployment_requests_count: deployed.length,
      message: parts.join('; '),
    };
  }

  return {
    autoDeployContainers: (requester: Requester, organizationId: string, body: ImageBody) => deployImage(requester, organizationId, 'CONTAINER', 'auto_deploy', body),
    previewContainers: (requester: Requester, organizationId: string, body: ImageBody) => deployImage(requester, organizationId, 'CONTAINER', 'auto_preview', body),
    autoDeployJobs: (requester: Requester, organizationId: string, body: ImageBody) => deployImage(requester, organizationId, 'JOB', 'auto_deploy', body),
  };
}

export type ImageDeploys = ReturnType<typeof createImageDeploys>;
