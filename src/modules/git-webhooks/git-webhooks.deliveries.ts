import { createHmac } from 'node:crypto';
import type { GitProvider } from '../../git/git-access.ts';
import { constantTimeEqual } from '../../lib/crypto.ts';
import { badRequest, unauthenticated } from '../../lib/errors.ts';

/**
 * What a git provider's webhook delivery says, read the way each provider sends it (docs/git-webhooks.md): its
 * signature checked against the service's secret, its delivery id (what a replay repeats) and its event, reduced
 * to the few facts Slipway acts on. Pure functions over headers and bytes: no database, no HTTP framework.
 *
 *   - GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`, `X-GitHub-Delivery`, `X-GitHub-Event`.
 *   - GitLab: `X-Gitlab-Token: <the secret itself>`, `X-Gitlab-Event-UUID` (or `Idempotency-Key`), `X-Gitlab-Event`.
 *   - Bitbucket Cloud: `X-Hub-Signature: sha256=<hex HMAC-SHA256>`, `X-Request-UUID`, `X-Event-Key`.
 */

export type Headers = Record<string, string | string[] | undefined>;

/** A push to a branch: the commit it moved the branch to and the paths its commits changed, when the payload lists them. */
export interface PushEvent {
  kind: 'push';
  repository: string;
  branch: string | null;
  /** Null when the push deleted the branch. */
  commitId: string | null;
  /** Null when the provider does not list them (Bitbucket): every path counts as changed. */
  changedPaths: string[] | null;
  pusher: string | null;
}

export interface PullRequestEvent {
  kind: 'pull_request';
  repository: string;
  action: 'open' | 'update' | 'close';
  number: number;
  branch: string;
  baseBranch: string;
  /** The head commit, when the provider gives it in full. */
  commitId: string | null;
}

export type GitEvent = PushEvent | PullRequestEvent | { kind: 'ping' } | { kind: 'other'; name: string };

export interface Delivery {
  deliveryId: string;
  eventName: string;
  event: GitEvent;
}

const FULL_COMMIT_ID = /^[0-9a-f]{40}$/;
const ZERO_COMMIT = '0000000000000000000000000000000000000000';

function header(headers: Headers, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

function hmacMatches(signatureHeader: string | undefined, secret: string, body: Buffer): boolean {
  if (signatureHeader === undefined || !signatureHeader.startsWith('sha256=')) return false;
  const expected = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  return constantTimeEqual(signatureHeader.toLowerCase(), expected);
}

/** Throws 401 unless the delivery carries the provider's proof that it was sent with `secret`. */
export function verifyDelivery(provider: GitProvider, headers: Headers, body: Buffer, secret: string): void {
  const verified =
    provider === 'GITHUB'
      ? hmacMatches(header(headers, 'x-hub-signature-256'), secret, body)
      : provider === 'BITBUCKET'
        ? hmacMatches(header(headers, 'x-hub-signature'), secret, body)
        : constantTimeEqual(header(headers, 'x-gitlab-token') ?? '', secret);
  if (!verified) throw unauthenticated(`the delivery's ${SIGNATURE_HEADER[provider]} does not match this service's webhook secret`);
}

export const SIGNATURE_HEADER: Record<GitProvider, string> = {
  GITHUB: 'X-Hub-Signature-256',
  GITLAB: 'X-Gitlab-Token',
  BITBUCKET: 'X-Hub-Signature',
};

const DELIVERY_HEADERS: Record<GitProvider, string[]> = {
  GITHUB: ['x-github-delivery'],
  GITLAB: ['x-gitlab-event-uuid', 'idempotency-key'],
  BITBUCKET: ['x-request-uuid'],
};

const EVENT_HEADER: Record<GitProvider, string> = { GITHUB: 'x-github-event', GITLAB: 'x-gitlab-event', BITBUCKET: 'x-event-key' };

type Json = Record<string, unknown>;

function object(value: unknown, field: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest(`the payload's ${field} is not an object`, [{ field: `/${field}`, message: 'must be an object' }]);
  return value as Json;
}

function text(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') throw badRequest(`the payload's ${field} is missing`, [{ field: `/${field.replaceAll('.', '/')}`, message: 'must be a non-empty string' }]);
  return value;
}

function optionalText(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

function integer(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) throw badRequest(`the payload's ${field} is not a pull request number`, [{ field: `/${field.replaceAll('.', '/')}`, message: 'must be a positive integer' }]);
  return value;
}

function fullCommit(value: unknown): string | null {
  return typeof value === 'string' && FULL_COMMIT_ID.test(value) && value !== ZERO_COMMIT ? value : null;
}

function branchOfRef(ref: unknown): string | null {
  return typeof ref === 'string' && ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null;
}

/** The paths a GitHub or GitLab push's commits added, modified or removed. */
function changedPathsOf(commits: unknown): string[] {
  if (!Array.isArray(commits)) return [];
  const paths = new Set<string>();
  for (const commit of commits) {
    if (typeof commit !== 'object' || commit === null) continue;
    for (const list of ['added', 'modified', 'removed'] as const) {
      const entries = (commit as Json)[list];
      if (Array.isArray(entries)) for (const entry of entries) if (typeof entry === 'string') paths.add(entry);
    }
  }
  return [...paths];
}

function githubEvent(name: string, payload: Json): GitEvent {
  if (name === 'ping') return { kind: 'ping' };
  if (name === 'push') {
    const repository = text(object(payload.repository, 'repository').full_name, 'repository.full_name');
    const deleted = payload.deleted === true;
    return {
      kind: 'push',
      repository,
      branch: branchOfRef(payload.ref),
      commitId: deleted ? null : fullCommit(payload.after),
      changedPaths: changedPathsOf(payload.commits),
      pusher: optionalText((payload.pusher as Json | undefined)?.name),
    };
  }
  if (name === 'pull_request') {
    const action = payload.action;
    const kind = action === 'opened' || action === 'reopened' ? 'open' : action === 'synchronize' ? 'update' : action === 'closed' ? 'close' : undefined;
    if (kind === undefined) return { kind: 'other', name: `pull_request ${String(action)}` };
    const pullRequest = object(payload.pull_request, 'pull_request');
    const head = object(pullRequest.head, 'pull_request.head');
    const base = object(pullRequest.base, 'pull_request.base');
    return {
      kind: 'pull_request',
      repository: text(object(payload.repository, 'repository').full_name, 'repository.full_name'),
      action: kind,
      number: integer(payload.number ?? pullRequest.number, 'number'),
      branch: text(head.ref, 'pull_request.head.ref'),
      baseBranch: text(base.ref, 'pull_request.base.ref'),
      commitId: fullCommit(head.sha),
    };
  }
  return { kind: 'other', name };
}

function gitlabEvent(name: string, payload: Json): GitEvent {
  if (name === 'Push Hook') {
    const project = object(payload.project, 'project');
    return {
      kind: 'push',
      repository: text(project.path_with_namespace, 'project.path_with_namespace'),
      branch: branchOfRef(payload.ref),
      commitId: fullCommit(payload.checkout_sha ?? payload.after),
      changedPaths: changedPathsOf(payload.commits),
      pusher: optionalText(payload.user_username),
    };
  }
  if (name === 'Merge Request Hook') {
    const attributes = object(payload.object_attributes, 'object_attributes');
    const action = attributes.action;
    const kind = action === 'open' || action === 'reopen' ? 'open' : action === 'update' ? 'update' : action === 'close' || action === 'merge' ? 'close' : undefined;
    if (kind === undefined) return { kind: 'other', name: `Merge Request Hook ${String(action)}` };
    return {
      kind: 'pull_request',
      repository: text(object(payload.project, 'project').path_with_namespace, 'project.path_with_namespace'),
      action: kind,
      number: integer(attributes.iid, 'object_attributes.iid'),
      branch: text(attributes.source_branch, 'object_attributes.source_branch'),
      baseBranch: text(attributes.target_branch, 'object_attributes.target_branch'),
      commitId: fullCommit((attributes.last_commit as Json | undefined)?.id),
    };
  }
  return { kind: 'other', name };
}

function bitbucketEvent(name: string, payload: Json): GitEvent {
  const repository = () => text(object(payload.repository, 'repository').full_name, 'repository.full_name');
  if (name === 'repo:push') {
    const changes = (object(payload.push, 'push').changes ?? []) as unknown[];
    // One delivery may carry several refs; the last branch change is the one acted on (Bitbucket sends one per push).
    const change = [...(Array.isArray(changes) ? changes : [])].reverse().find((entry) => ((entry as Json | null)?.new as Json | null | undefined)?.type === 'branch') as Json | undefined;
    const moved = change?.new as Json | undefined;
    return {
      kind: 'push',
      repository: repository(),
      branch: optionalText(moved?.name),
      commitId: fullCommit((moved?.target as Json | undefined)?.hash),
      changedPaths: null,
      pusher: optionalText((payload.actor as Json | undefined)?.display_name),
    };
  }
  const actions: Record<string, PullRequestEvent['action']> = {
    'pullrequest:created': 'open',
    'pullrequest:updated': 'update',
    'pullrequest:fulfilled': 'close',
    'pullrequest:rejected': 'close',
  };
  const action = actions[name];
  if (action !== undefined) {
    const pullRequest = object(payload.pullrequest, 'pullrequest');
    const source = object(pullRequest.source, 'pullrequest.source');
    const destination = object(pullRequest.destination, 'pullrequest.destination');
    return {
      kind: 'pull_request',
      repository: repository(),
      action,
      number: integer(pullRequest.id, 'pullrequest.id'),
      branch: text((source.branch as Json | undefined)?.name, 'pullrequest.source.branch.name'),
      baseBranch: text((destination.branch as Json | undefined)?.name, 'pullrequest.destination.branch.name'),
      commitId: fullCommit((source.commit as Json | undefined)?.hash),
    };
  }
  return { kind: 'other', name };
}

/**
 * The delivery's id, event name and event. 400 when the provider's delivery id or event header is missing, the body
 * is not a JSON object, or an event Slipway acts on lacks what it needs.
 */
export function readDelivery(provider: GitProvider, headers: Headers, body: Buffer): Delivery {
  const deliveryId = DELIVERY_HEADERS[provider].map((name) => header(headers, name)).find((value) => value !== undefined && value !== '');
  if (deliveryId === undefined || deliveryId.length > 200) {
    throw badRequest(`the delivery has no usable delivery id header (${DELIVERY_HEADERS[provider].join(' or ')})`);
  }
  const eventName = header(headers, EVENT_HEADER[provider]);
  if (eventName === undefined || eventName === '' || eventName.length > 64) throw badRequest(`the delivery has no ${EVENT_HEADER[provider]} header`);
  let payload: unknown;
  try {
    payload = JSON.parse(body.toString('utf8'));
  } catch {
    throw badRequest('the delivery body is not JSON (configure the webhook with content type application/json)');
  }
  const json = object(payload, 'body');
  const event = provider === 'GITHUB' ? githubEvent(eventName, json) : provider === 'GITLAB' ? gitlabEvent(eventName, json) : bitbucketEvent(eventName, json);
  return { deliveryId, eventName, event };
}
