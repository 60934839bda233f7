import { request as httpsRequest } from 'node:https';
import type { GitProvider } from '../../git/git-access.ts';
import { nodeHttp } from '../../lib/node-http.ts';
import { guardedLookup, urlProblem, type OutboundPolicy } from '../../registry/outbound-http.ts';

/**
 * The git providers' REST APIs for a repository's webhooks, reached with the service's git token at the token's
 * `git_api_url` (docs/git-webhooks.md): find Slipway's hook among the repository's, create it, or update its events
 * and secret. The address policy is the outbound one (registry/outbound-http.ts): only public hosts unless the
 * installation allows private ones, the address connected to being the one checked; no redirects followed.
 *
 *   - GitHub:    GET/POST /repos/{owner}/{repo}/hooks, PATCH /repos/{owner}/{repo}/hooks/{id}
 *   - GitLab:    GET/POST /projects/{owner%2Frepo}/hooks, PUT /projects/{…}/hooks/{id}
 *   - Bitbucket: GET/POST /repositories/{workspace}/{repo}/hooks, PUT /repositories/{…}/hooks/{uid}
 */

/** The events Slipway acts on, as each provider names them in a hook's configuration. */
export const WANTED_EVENTS: Record<GitProvider, readonly string[]> = {
  GITHUB: ['push', 'pull_request'],
  GITLAB: ['push_events', 'merge_requests_events'],
  BITBUCKET: ['repo:push', 'pullrequest:created', 'pullrequest:updated', 'pullrequest:fulfilled', 'pullrequest:rejected'],
};

export interface ProviderHook {
  id: string;
  url: string;
  active: boolean;
  /** The wanted events it is subscribed to (WANTED_EVENTS' names). */
  events: string[];
}

export interface HookTarget {
  provider: GitProvider;
  apiUrl: string;
  token: string;
  /** `owner/name` as the provider spells it. */
  repository: string;
}

/** The provider could not be asked (unreachable, refused by the address policy, or an answer that is no hook list). */
export class ProviderApiFailure extends Error {
  readonly status: number | null;
  constructor(message: string, status: number | null) {
    super(message);
    this.name = 'ProviderApiFailure';
    this.status = status;
  }
}

const TIMEOUT_MS = 10_000;
const MAX_RESPONSE_BYTES = 1024 * 1024;

interface JsonAnswer {
  status: number;
  body: unknown;
}

function authorizationOf(target: HookTarget): Record<string, string> {
  if (target.provider === 'GITLAB') return { 'private-token': target.token };
  return { authorization: `Bearer ${target.token}` };
}

function send(policy: OutboundPolicy, target: HookTarget, method: string, path: string, body?: unknown): Promise<JsonAnswer> {
  const url = new URL(`${target.apiUrl.replace(/\/$/, '')}${path}`);
  const problem = urlProblem(url, policy);
  if (problem !== undefined) return Promise.reject(new ProviderApiFailure(`the git token's API URL ${problem}`, null));
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const request = url.protocol === 'https:' ? httpsRequest : nodeHttp.request;
  return new Promise((resolve, reject) => {
    const outgoing = request(url, {
      method,
      headers: {
        accept: 'application/json',
        'user-agent': 'Slipway',
        ...authorizationOf(target),
        ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }),
      },
      lookup: guardedLookup(policy),
    });
    const timer = setTimeout(() => outgoing.destroy(new Error('timeout')), TIMEOUT_MS);
    outgoing.on('error', (error) => {
      clearTimeout(timer);
      reject(new ProviderApiFailure(`${url.host} could not be reached (${error.message})`, null));
    });
    outgoing.on('response', (incoming) => {
      const chunks: Buffer[] = [];
      let size = 0;
      incoming.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) incoming.destroy(new Error('answer too large'));
        else chunks.push(chunk);
      });
      incoming.on('error', (error) => {
        clearTimeout(timer);
        reject(new ProviderApiFailure(`${url.host} broke off its answer (${error.message})`, null));
      });
      incoming.on('end', () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = null;
        try {
          parsed = text === '' ? null : JSON.parse(text);
        } catch {
          parsed = null;
        }
        resolve({ status: incoming.statusCode ?? 0, body: parsed });
      });
    });
    outgoing.end(payload);
  });
}

function succeeded(answer: JsonAnswer, what: string): unknown {
  if (answer.status >= 200 && answer.status < 300) return answer.body;
  const reason = answer.status === 401 || answer.status === 403 ? 'the git token is refused or lacks the right to manage webhooks' : answer.status === 404 ? 'the repository is unknown to the git token' : `HTTP ${answer.status}`;
  throw new ProviderApiFailure(`${what}: ${reason}`, answer.status);
}

type Json = Record<string, unknown>;

function hooksPath(target: HookTarget): string {
  const [owner, ...rest] = target.repository.split('/');
  if (target.provider === 'GITHUB') return `/repos/${encodeURIComponent(owner ?? '')}/${encodeURIComponent(rest.join('/'))}/hooks`;
  if (target.provider === 'GITLAB') return `/projects/${encodeURIComponent(target.repository)}/hooks`;
  return `/repositories/${encodeURIComponent(owner ?? '')}/${encodeURIComponent(rest.join('/'))}/hooks`;
}

function hookOf(provider: GitProvider, raw: unknown): ProviderHook | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const hook = raw as Json;
  if (provider === 'GITHUB') {
    const config = (hook.config ?? {}) as Json;
    const events = Array.isArray(hook.events) ? hook.events.filter((event): event is string => typeof event === 'string') : [];
    const all = events.includes('*');
    return { id: String(hook.id), url: String(config.url ?? ''), active: hook.active !== false, events: WANTED_EVENTS.GITHUB.filter((event) => all || events.includes(event)) };
  }
  if (provider === 'GITLAB') {
    return { id: String(hook.id), url: String(hook.url ?? ''), active: hook.disabled_until == null && hook.alert_status !== 'disabled', events: WANTED_EVENTS.GITLAB.filter((event) => hook[event] === true) };
  }
  const events = Array.isArray(hook.events) ? hook.events.filter((event): event is string => typeof event === 'string') : [];
  return { id: String(hook.uuid ?? ''), url: String(hook.url ?? ''), active: hook.active !== false, events: WANTED_EVENTS.BITBUCKET.filter((event) => events.includes(event)) };
}

function hookBody(provider: GitProvider, url: string, secret: string): Json {
  if (provider === 'GITHUB') return { name: 'web', active: true, events: [...WANTED_EVENTS.GITHUB], config: { url, content_type: 'json', secret, insecure_ssl: '0' } };
  if (provider === 'GITLAB') return { url, token: secret, push_events: true, merge_requests_events: true, enable_ssl_verification: true };
  return { description: 'Slipway', url, active: true, secret, events: [...WANTED_EVENTS.BITBUCKET] };
}

export function createProviderHooks(policy: OutboundPolicy) {
  /** The repository's hooks as the provider lists them (first page of 100: Slipway's is one among a repository's few). */
  async function listHooks(target: HookTarget): Promise<ProviderHook[]> {
    const query = target.provider === 'BITBUCKET' ? '?pagelen=100' : '?per_page=100';
    const body = succeeded(await send(policy, target, 'GET', `${hooksPath(target)}${query}`), 'listing the repository webhooks');
    const list = target.provider === 'BITBUCKET' ? (body as Json | null)?.values : body;
    if (!Array.isArray(list)) throw new ProviderApiFailure('the provider answered no webhook list', null);
    return list.map((raw) => hookOf(target.provider, raw)).filter((hook): hook is ProviderHook => hook !== undefined);
  }

  return {
    listHooks,

    /** The hook delivering to `url`, if the repository has one. */
    async findHook(target: HookTarget, url: string): Promise<ProviderHook | undefined> {
      return (await listHooks(target)).find((hook) => hook.url === url);
    },

    /** Creates the hook, or updates the one delivering to `url` (its events, secret and active flag); answers its id. */
    async upsertHook(target: HookTarget, url: string, secret: string): Promise<string> {
      const existing = (await listHooks(target)).find((hook) => hook.url === url);
      const body = hookBody(target.provider, url, secret);
      if (existing !== undefined) {
        const method = target.provider === 'GITHUB' ? 'PATCH' : 'PUT';
        succeeded(await send(policy, target, method, `${hooksPath(target)}/${encodeURIComponent(existing.id)}`, body), 'updating the repository webhook');
        return existing.id;
      }
      const created = hookOf(target.provider, succeeded(await send(policy, target, 'POST', hooksPath(target), body), 'creating the repository webhook'));
      if (created === undefined || created.id === '' || created.id === 'undefined') throw new ProviderApiFailure('the provider answered no webhook id', null);
      return created.id;
    },
  };
}

export type ProviderHooks = ReturnType<typeof createProviderHooks>;
