import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Requester, ScheduledActor } from '../../auth/principal.ts';
import type { DB } from '../../db/db.schema.ts';
import type { GitProvider } from '../../git/git-access.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { AppError, badRequest, notFound, unauthenticated } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import { storedGitSourceOf, type StoredGitSource } from '../services/services.git-sources.ts';
import type { StoredService } from '../services/services.kinds.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';
import { readDelivery, verifyDelivery, type Delivery, type Headers, type PullRequestEvent, type PushEvent } from './git-webhooks.deliveries.ts';
import { ProviderApiFailure, WANTED_EVENTS, type HookTarget, type ProviderHooks } from './git-webhooks.provider-api.ts';
import { claimDelivery, findDelivery, findWebhook, insertWebhook, releaseDelivery, replaceSecret, setProviderHookId, settleDelivery, type GitWebhookRow } from './git-webhooks.repo.ts';

/**
 * Git webhooks (issue 23, docs/git-webhooks.md). A service built from git gets one webhook: syncServiceGitWebhook
 * generates its secret (sealed at rest, never answered) and registers the hook in the repository through the
 * provider's API with the service's git token; getServiceGitWebhookStatus asks the provider whether the hook is there
 * with the events Slipway needs. The provider then POSTs deliveries to `/git-webhook/{provider}/{serviceId}`, which
 * are verified with the provider's own scheme and acted on once per delivery id:
 *
 *   - a push to the branch the service tracks, with auto-deploy on and the deployment restrictions passed, deploys
 *     the pushed commit; any other push is answered "ignored";
 *   - a pull request against that branch opens, updates or deletes a preview environment (git-webhooks.previews.ts)
 *     when the service's environment has previews on.
 */

export type GitWebhookStatus = 'ACTIVE' | 'NOT_CONFIGURED' | 'MISCONFIGURED' | 'UNABLE_TO_VERIFY';

export interface GitWebhookStatusView {
  status: GitWebhookStatus;
  provider: GitProvider;
  missing_events: string[];
}

export type DeliveryOutcome = 'DEPLOYED' | 'IGNORED' | 'DUPLICATE' | 'PREVIEW_DEPLOYED' | 'PREVIEW_DELETED';

export interface DeliveryView {
  delivery_id: string;
  event: string;
  outcome: DeliveryOutcome;
  message: string;
  service_id: string;
  git_commit_id: string | null;
  /** The preview environment a pull request event created, updated or deleted. */
  environment_id: string | null;
}

/** What a pull request event did to its preview environment (git-webhooks.previews.ts). */
export interface PreviewOutcome {
  outcome: 'PREVIEW_DEPLOYED' | 'PREVIEW_DELETED' | 'IGNORED';
  message: string;
  environmentId: string | null;
}

export interface PreviewPort {
  pullRequestChanged(service: StoredService, source: StoredGitSource, event: PullRequestEvent): Promise<PreviewOutcome>;
}

export interface GitWebhooksDeps {
  db: Kysely<DB>;
  clock: Clock;
  secrets: SecretBox;
  /** SLIPWAY_PUBLIC_URL: where providers reach this installation. */
  publicUrl: string;
  hooks: ProviderHooks;
  services: { findService(serviceId: string): Promise<StoredService | undefined> };
  gitTokens: {
    getGitToken(organizationId: string, gitTokenId: string): Promise<{ git_api_url: string }>;
    credentialsOf(organizationId: string, gitTokenId: string): Promise<{ token: string } | undefined>;
  };
  restrictions: { pushDeploysService(serviceId: string, changedPaths: readonly string[]): Promise<boolean> };
  deployments: { deployService(requester: Requester, kind: ServiceKind, serviceId: string, input: { git_commit_id?: string }): Promise<unknown> };
  previews?: PreviewPort;
}

/** The provider cannot do what sync needs (no token to register with, a refusal): the reference's 422. */
const unprocessable = (message: string): AppError => new AppError('unprocessable', message);

/** The path segment of each provider in the delivery URL. */
export const PROVIDER_PATHS = { github: 'GITHUB', gitlab: 'GITLAB', bitbucket: 'BITBUCKET' } as const satisfies Record<string, GitProvider>;
export type ProviderPath = keyof typeof PROVIDER_PATHS;

const PATH_OF: Record<GitProvider, ProviderPath> = { GITHUB: 'github', GITLAB: 'gitlab', BITBUCKET: 'bitbucket' };

/** Binds a sealed secret to its service: a copied envelope does not open for another. */
function associatedData(serviceId: string, organizationId: string): string {
  return `git-webhook:${organizationId}:${serviceId}`;
}

/** `owner/name` of a stored source, lower case, as payloads name repositories. */
export function repositoryKey(source: Pick<StoredGitSource, 'owner' | 'name'>): string {
  return (source.owner === '' ? source.name : `${source.owner}/${source.name}`).toLowerCase();
}

export function createGitWebhooksService(deps: GitWebhooksDeps) {
  const { db, clock, secrets } = deps;

  function deliveryUrl(provider: GitProvider, serviceId: string): string {
    return `${deps.publicUrl.replace(/\/$/, '')}/git-webhook/${PATH_OF[provider]}/${serviceId}`;
  }

  async function requireGitService(serviceId: string): Promise<{ service: StoredService; source: StoredGitSource }> {
    const service = await deps.services.findService(serviceId);
    if (service === undefined) throw notFound(`service ${serviceId} not found`);
    const source = storedGitSourceOf(service.settings);
    if (source === null) throw badRequest(`service ${serviceId} is not built from a git repository: it has no git webhook`);
    return { service, source };
  }

  /** The provider API target of the service's repository, or undefined without a git token. */
  async function hookTarget(service: StoredService, source: StoredGitSource): Promise<HookTarget | undefined> {
    if (source.git_token_id === null) return undefined;
    const credentials = await deps.gitTokens.credentialsOf(service.organizationId, source.git_token_id);
    if (credentials === undefined) return undefined;
    const { git_api_url: apiUrl } = await deps.gitTokens.getGitToken(service.organizationId, source.git_token_id);
    return { provider: source.provider, apiUrl, token: credentials.token, repository: source.owner === '' ? source.name : `${source.owner}/${source.name}` };
  }

  async function statusOf(service: StoredService, source: StoredGitSource, row: GitWebhookRow | undefined): Promise<GitWebhookStatusView> {
    const wanted = [...WANTED_EVENTS[source.provider]];
    const answer = (status: GitWebhookStatus, missing: string[]): GitWebhookStatusView => ({ status, provider: source.provider, missing_events: missing });
    if (row === undefined) return answer('NOT_CONFIGURED', wanted);
    const target = await hookTarget(service, source);
    if (target === undefined) return answer('UNABLE_TO_VERIFY', []);
    try {
      const hook = await deps.hooks.findHook(target, deliveryUrl(source.provider, service.id));
      if (hook === undefined) return answer('NOT_CONFIGURED', wanted);
      const missing = wanted.filter((event) => !hook.events.includes(event));
      return answer(hook.active && missing.length === 0 ? 'ACTIVE' : 'MISCONFIGURED', missing);
    } catch (error) {
      if (error instanceof ProviderApiFailure) return answer('UNABLE_TO_VERIFY', []);
      throw error;
    }
  }

  /** The secret of a webhook row; undefined when it no longer opens (the installation's secret key changed). */
  function openSecret(row: GitWebhookRow): string | undefined {
    try {
      return secrets.open(row.secret_envelope, associatedData(row.service_id, row.organization_id));
    } catch {
      return undefined;
    }
  }

  /** The service's webhook row, created with a new secret when it has none (two racing syncs keep one secret). */
  async function ensureWebhook(service: StoredService, provider: GitProvider): Promise<{ row: GitWebhookRow; secret: string }> {
    const existing = await findWebhook(db, service.id);
    const secret = randomBytes(32).toString('hex');
    const now = isoTimestamp(clock);
    const envelope = secrets.seal(secret, associatedData(service.id, service.organizationId));
    if (existing !== undefined) {
      const current = openSecret(existing);
      if (current !== undefined) return { row: existing, secret: current };
      // Sealed under another key: the secret is lost; a new one is registered with the provider by this sync.
      await replaceSecret(db, service.id, envelope, now);
      return { row: { ...existing, secret_envelope: envelope, updated_at: now }, secret };
    }
    const row: GitWebhookRow = {
      service_id: service.id,
      organization_id: service.organizationId,
      provider,
      secret_envelope: envelope,
      provider_hook_id: null,
      created_at: now,
      updated_at: now,
    };
    if (await insertWebhook(db, row)) return { row, secret };
    return ensureWebhook(service, provider);
  }

  async function onPush(service: StoredService, source: StoredGitSource, event: PushEvent, provider: GitProvider): Promise<Omit<DeliveryView, 'delivery_id' | 'event' | 'service_id'>> {
    const ignored = (message: string) => ({ outcome: 'IGNORED' as const, message, git_commit_id: event.commitId, environment_id: null });
    if (event.branch === null) return ignored('the push moved no branch (a tag)');
    if (event.branch !== source.branch) return ignored(`push to branch ${event.branch}; the service deploys ${source.branch}`);
    if (event.commitId === null) return ignored(`the push deleted branch ${event.branch}`);
    if (service.settings.auto_deploy !== true) return ignored('auto-deploy is off for this service');
    if (!(await deps.restrictions.pushDeploysService(service.id, event.changedPaths ?? []))) {
      return ignored('the deployment restrictions leave this push out: none of its changed paths deploys the service');
    }
    const actor: ScheduledActor = { kind: 'schedule', name: `git push${event.pusher === null ? '' : ` by ${event.pusher}`} (${provider.toLowerCase()} webhook)`, origin: 'GIT' };
    await deps.deployments.deployService(actor, service.kind, service.id, { git_commit_id: event.commitId });
    return { outcome: 'DEPLOYED', message: `deploying commit ${event.commitId} of branch ${event.branch}`, git_commit_id: event.commitId, environment_id: null };
  }

  async function act(service: StoredService, source: StoredGitSource, delivery: Delivery): Promise<Omit<DeliveryView, 'delivery_id' | 'event' | 'service_id'>> {
    const { event } = delivery;
    if (event.kind === 'ping') return { outcome: 'IGNORED', message: 'ping received: the webhook reaches Slipway', git_commit_id: null, environment_id: null };
    if (event.kind === 'other') return { outcome: 'IGNORED', message: `event ${event.name} is not one Slipway acts on`, git_commit_id: null, environment_id: null };
    if (event.repository.toLowerCase() !== repositoryKey(source)) {
      return { outcome: 'IGNORED', message: `the event is about ${event.repository}; the service builds ${repositoryKey(source)}`, git_commit_id: null, environment_id: null };
    }
    if (event.kind === 'push') return onPush(service, source, event, source.provider);
    if (event.baseBranch !== source.branch) {
      return { outcome: 'IGNORED', message: `pull request ${event.number} targets ${event.baseBranch}; the service deploys ${source.branch}`, git_commit_id: null, environment_id: null };
    }
    if (deps.previews === undefined) return { outcome: 'IGNORED', message: 'preview environments are not available', git_commit_id: null, environment_id: null };
    const preview = await deps.previews.pullRequestChanged(service, source, event);
    return { outcome: preview.outcome, message: preview.message, git_commit_id: event.commitId, environment_id: preview.environmentId };
  }

  return {
    async getServiceGitWebhookStatus(serviceId: string): Promise<GitWebhookStatusView> {
      const { service, source } = await requireGitService(serviceId);
      return statusOf(service, source, await findWebhook(db, serviceId));
    },

    /**
     * Creates the service's secret if it has none (a sync never changes it: deliveries under way stay valid) and
     * creates or updates Slipway's hook in the repository with it. 422 without a git token, or when the provider
     * refuses or cannot be reached (nothing is answered of the secret either way).
     */
    async syncServiceGitWebhook(serviceId: string): Promise<GitWebhookStatusView> {
      const { service, source } = await requireGitService(serviceId);
      const target = await hookTarget(service, source);
      if (target === undefined) {
        throw unprocessable(`service ${serviceId} has no git token: Slipway registers the webhook in the repository with the service's git token; give the service one that may manage webhooks`);
      }
      const { row, secret } = await ensureWebhook(service, source.provider);
      let hookId: string;
      try {
        hookId = await deps.hooks.upsertHook(target, deliveryUrl(source.provider, service.id), secret);
      } catch (error) {
        if (error instanceof ProviderApiFailure) throw unprocessable(`the webhook could not be registered in ${target.repository}: ${error.message}`);
        throw error;
      }
      await setProviderHookId(db, service.id, hookId, isoTimestamp(clock));
      return statusOf(service, source, row);
    },

    /**
     * One delivery from a provider. 404 when the service has no webhook of this provider (the same answer for a
     * service that does not exist), 401 when the signature does not verify, 400 for a delivery that cannot be read;
     * then, once per delivery id, what the event did. A delivery whose action is refused (the service busy: 409) is
     * forgotten, so that the provider's redelivery may act.
     */
    async receiveDelivery(providerPath: ProviderPath, serviceId: string, headers: Headers, body: Buffer): Promise<DeliveryView> {
      const provider = PROVIDER_PATHS[providerPath];
      const service = await deps.services.findService(serviceId);
      const source = service === undefined ? null : storedGitSourceOf(service.settings);
      const row = service === undefined ? undefined : await findWebhook(db, serviceId);
      if (service === undefined || source === null || source.provider !== provider || row === undefined) {
        throw notFound(`no ${providerPath} webhook is configured for service ${serviceId}`);
      }
      const secret = openSecret(row);
      if (secret === undefined) throw unauthenticated(`the webhook secret of service ${serviceId} can no longer be read (the server's secret key changed): sync the webhook again`);
      verifyDelivery(provider, headers, body, secret);
      const delivery = readDelivery(provider, headers, body);
      const base = { delivery_id: delivery.deliveryId, event: delivery.eventName, service_id: serviceId };
      const duplicate = (message: string | null): DeliveryView => ({
        ...base,
        outcome: 'DUPLICATE',
        message: `delivery ${delivery.deliveryId} was already received${message === null ? '' : `: ${message}`}`,
        git_commit_id: null,
        environment_id: null,
      });
      const seen = await findDelivery(db, serviceId, delivery.deliveryId);
      if (seen !== undefined) return duplicate(seen.message);
      const claimId = newId();
      const claimed = await claimDelivery(db, {
        id: claimId,
        service_id: serviceId,
        delivery_id: delivery.deliveryId,
        event: delivery.eventName,
        outcome: 'RECEIVED',
        message: null,
        received_at: isoTimestamp(clock),
      });
      if (!claimed) return duplicate(null);
      try {
        const result = await act(service, source, delivery);
        await settleDelivery(db, claimId, result.outcome, result.message);
        return { ...base, ...result };
      } catch (error) {
        await releaseDelivery(db, claimId);
        throw error;
      }
    },
  };
}

export type GitWebhooksService = ReturnType<typeof createGitWebhooksService>;
