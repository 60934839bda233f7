import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CompiledQuery } from 'kysely';
import { principalDisplayName, type Principal } from '../auth/principal.ts';
import { withCommitParticipant, type CommitParticipant } from '../db/db.commit-participants.ts';
import type { ScheduledWork } from '../jobs/job-schedules.ts';
import { isUuid } from '../lib/ids.ts';
import { originOf } from '../lib/request-origin.ts';
import { changeSummary } from '../modules/organization-events/organization-events.masking.ts';
import type { EventRecord, RecordedEvent } from '../modules/organization-events/organization-events.service.ts';
import { classifyRoute, type AuthorType } from '../modules/organization-events/organization-events.taxonomy.ts';
import { isFailureStatus } from './errors.ts';
import type { AuthorizationPorts } from './authorize.ts';
import type { FastifyTypeBox } from './fastify.types.ts';
import { TARGET_PARAMS } from './route-access.ts';

/**
 * The audit hook (docs/audit-log.md): every write request (POST, PUT, PATCH, DELETE) under an organization becomes
 * one organization event, and so does a read whose route declares `audited` (one revealing a secret: EXPORT).
 *
 *   preHandler  once authorization has established the organization, the handler runs with the request's event as
 *               a commit participant (db/db.commit-participants.ts): the first transaction the handler commits
 *               writes the event on its own connection, so the change and its record commit or roll back together
 *   onSend      the answer settles the event: its status and outcome, and the id and name of what a create made;
 *               a request whose handler committed no transaction (a write without one, a failure, a denial by the
 *               authorizer — a policy token's 403 among them) has its event written here, before the answer leaves
 *
 * Who is recorded only once established: a person's request counts once the authorizer has admitted them to the
 * organization (an outsider's probes write nothing into another tenant's log); a token belongs to one organization,
 * so its writes to that organization's resources, refused ones included, go to its log, while its probes of other
 * organizations' ids go nowhere. Idempotent replays are not new writes and are not recorded again. A settled event
 * is then announced to the organization's webhooks (ORGANIZATION_EVENT).
 */
export interface AuditPorts {
  compileInsert(event: EventRecord): { query: CompiledQuery; recorded: RecordedEvent };
  record(event: EventRecord): Promise<RecordedEvent>;
  /** Tells the organization's subscribers (webhooks) about a settled event. */
  announce(recorded: RecordedEvent, event: EventRecord): Promise<void>;
  complete(id: string, fields: Pick<EventRecord, 'status_code' | 'outcome' | 'target_id' | 'target_name'>): Promise<boolean>;
  /** The authorizer's placement ports: whether a refused token addressed its own organization's resources. */
  placementOf: AuthorizationPorts['placementOf'];
}

const SWEEP_INTERVAL_MS = 60 * 60 * 1000;

/**
 * The audit log's retention sweep (docs/audit-log.md), a schedule of the installation (src/jobs/job-schedules.ts): at
 * its start and hourly, events older than the longest retention of any plan go, a deleted organization's log with them.
 */
export function organizationEventsSweepSchedule(events: { removeExpired(): Promise<void> }): ScheduledWork {
  return { name: 'organization-events-sweep', intervalMs: SWEEP_INTERVAL_MS, atStart: true, run: () => events.removeExpired() };
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Operations whose answer names the organization they made (the request had none to authorize against). */
const ORGANIZATION_CREATING_OPERATIONS = new Set(['createOrganization']);
const MAX_USER_AGENT = 512;

declare module 'fastify' {
  interface FastifyRequest {
    auditEvent: RequestEvent | undefined;
  }
}

/** The event of one request, taking part in the first transaction its handler commits. */
class RequestEvent implements CommitParticipant {
  private state: 'pending' | 'writing' | 'written' | 'settled' = 'pending';
  private recorded: RecordedEvent | undefined;

  readonly draft: EventRecord;
  private readonly ports: AuditPorts;
  constructor(
    draft: EventRecord,
    ports: AuditPorts,
  ) {
    this.draft = draft;
    this.ports = ports;
  }

  async beforeCommit(execute: (query: CompiledQuery) => Promise<unknown>): Promise<void> {
    // One event per request: a later transaction, or one committing alongside the first, carries none.
    if (this.state !== 'pending') return;
    this.state = 'writing';
    const { query, recorded } = this.ports.compileInsert(this.draft);
    try {
      await execute(query);
    } catch (error) {
      this.state = 'pending';
      throw error;
    }
    this.recorded = recorded;
    if (this.state === 'writing') this.state = 'written';
  }

  /** Ends participation; answers the event written in a transaction, if one was. */
  settle(): RecordedEvent | undefined {
    const recorded = this.state === 'written' ? this.recorded : undefined;
    this.state = 'settled';
    return recorded;
  }
}

function authorOf(principal: Principal): { type: AuthorType; id: string } {
  if (principal.kind === 'user') return { type: 'USER', id: principal.userId };
  return { type: principal.kind === 'api_token' ? 'API_TOKEN' : 'POLICY_TOKEN', id: principal.tokenId };
}

function isAuditedRoute(request: FastifyRequest): boolean {
  const access = request.routeOptions.config.access;
  const recorded = WRITE_METHODS.has(request.method) || request.routeOptions.config.audited === true;
  return recorded && access !== undefined && !('public' in access) && request.principal !== undefined;
}

/** The route's path parameters in the order its URL names them. */
function pathIds(request: FastifyRequest): string[] {
  const params = (request.params ?? {}) as Record<string, unknown>;
  const names = (request.routeOptions.url ?? '').split('/').filter((segment) => segment.startsWith(':')).map((segment) => segment.slice(1));
  return names.map((name) => params[name]).filter((value): value is string => typeof value === 'string' && isUuid(value));
}

function stringField(value: unknown, field: string): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const found = (value as Record<string, unknown>)[field];
  return typeof found === 'string' ? found : undefined;
}

function draftOf(request: FastifyRequest, principal: Principal, organizationId: string): EventRecord {
  const operationId = request.routeOptions.schema?.operationId ?? `${request.method} ${request.routeOptions.url ?? ''}`;
  const classification = classifyRoute(operationId, request.method, request.routeOptions.url ?? '');
  const params = (request.params ?? {}) as Record<string, unknown>;
  const author = authorOf(principal);
  const userAgent = request.headers['user-agent'];
  const targetName = stringField(request.body, 'name');
  return {
    organization_id: organizationId,
    event_type: classification.eventType,
    target_type: classification.targetType,
    target_id: pathIds(request).at(-1) ?? organizationId,
    target_name: targetName ?? null,
    sub_target_type: classification.subTargetType,
    operation_id: operationId.slice(0, 128),
    change: changeSummary(operationId, request.body),
    origin: originOf(userAgent),
    author_type: author.type,
    author_id: author.id,
    triggered_by: principalDisplayName(principal),
    project_id: typeof params.projectId === 'string' && isUuid(params.projectId) ? params.projectId : null,
    environment_id: typeof params.environmentId === 'string' && isUuid(params.environmentId) ? params.environmentId : null,
    ip: request.ip.slice(0, 64),
    user_agent: userAgent === undefined ? null : userAgent.slice(0, MAX_USER_AGENT),
    request_id: request.id.slice(0, 128),
    status_code: null,
    outcome: 'SUCCESS',
  };
}

function parsedBody(payload: unknown): unknown {
  if (typeof payload !== 'string' || payload === '') return undefined;
  try {
    return JSON.parse(payload) as unknown;
  } catch {
    return undefined;
  }
}

/** The project and environment an admitted request acts in, when its target lives in one (a service's, too). */
async function whereRequestActs(request: FastifyRequest, ports: AuditPorts): Promise<Pick<EventRecord, 'project_id' | 'environment_id'>> {
  const access = request.routeOptions.config.access;
  if (access === undefined || 'public' in access || (access.target !== 'environment' && access.target !== 'service')) return {};
  const params = (request.params ?? {}) as Record<string, unknown>;
  const id = TARGET_PARAMS[access.target].map((name) => params[name]).find((value) => value !== undefined);
  if (typeof id !== 'string' || !isUuid(id)) return {};
  const placement = await ports.placementOf[access.target](id);
  return { project_id: placement?.projectId ?? null, environment_id: placement?.environmentId ?? null };
}

/**
 * Whether a token refused before authorization finished addressed its own organization: a token's refusals are its
 * organization's record, its probes of other organizations' ids (or of ids that name nothing) are not.
 */
async function addressesOwnOrganization(request: FastifyRequest, organizationId: string, ports: AuditPorts): Promise<boolean> {
  const access = request.routeOptions.config.access;
  if (access === undefined || 'public' in access) return false;
  const params = (request.params ?? {}) as Record<string, unknown>;
  if (access.target === 'none') {
    return access.ownerFoundByHandler !== true && (params.organizationId === undefined || params.organizationId === organizationId);
  }
  const id = TARGET_PARAMS[access.target].map((name) => params[name]).find((value) => value !== undefined);
  if (typeof id !== 'string' || !isUuid(id)) return false;
  if (access.target === 'organization') return id === organizationId;
  return (await ports.placementOf[access.target](id))?.organizationId === organizationId;
}

/** The organization a settled request's event belongs to, if it belongs to one (see the header comment). */
async function organizationOf(request: FastifyRequest, principal: Principal, failed: boolean, answer: unknown, ports: AuditPorts): Promise<string | undefined> {
  const operationId = request.routeOptions.schema?.operationId ?? '';
  if (!failed && ORGANIZATION_CREATING_OPERATIONS.has(operationId)) {
    const created = stringField(answer, 'id');
    if (created !== undefined && isUuid(created)) return created;
  }
  if (request.access !== undefined) return request.access.organizationId;
  if (principal.kind !== 'user') return (await addressesOwnOrganization(request, principal.organizationId, ports)) ? principal.organizationId : undefined;
  // A person on a route the authorizer left to its service (accepting an invitation): theirs once it succeeded.
  const named = ((request.params ?? {}) as Record<string, unknown>).organizationId;
  return !failed && typeof named === 'string' && isUuid(named) ? named : undefined;
}

export function installAudit(app: FastifyTypeBox, ports: AuditPorts): void {
  app.decorateRequest('auditEvent', undefined);

  // Registered after the idempotency hook, so a claim's own transaction commits before the event takes part.
  app.addHook('preHandler', (request, _reply, done) => {
    const principal = request.principal;
    const access = request.access;
    if (!isAuditedRoute(request) || principal === undefined || access === undefined) {
      done();
      return;
    }
    whereRequestActs(request, ports)
      .then((place) => new RequestEvent({ ...draftOf(request, principal, access.organizationId), ...place }, ports))
      .then(
        (event) => {
          request.auditEvent = event;
          withCommitParticipant(event, done);
        },
        (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
      );
  });

  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const principal = request.principal;
    if (!isAuditedRoute(request) || principal === undefined || reply.getHeader('idempotent-replayed') !== undefined) return payload;
    const recorded = request.auditEvent?.settle();
    const failed = isFailureStatus(reply.statusCode);
    const answer = failed ? undefined : parsedBody(payload);
    try {
      const organizationId = recorded?.organizationId ?? (await organizationOf(request, principal, failed, answer, ports));
      if (organizationId === undefined) return payload;
      const draft = request.auditEvent?.draft ?? draftOf(request, principal, organizationId);
      const createdId = draft.event_type === 'CREATE' ? stringField(answer, 'id') : undefined;
      const answeredName = stringField(answer, 'name');
      const fields = {
        status_code: reply.statusCode,
        outcome: failed ? 'FAILURE' : 'SUCCESS',
        target_id: createdId !== undefined && isUuid(createdId) ? createdId : (draft.target_id ?? null),
        target_name: (createdId !== undefined || stringField(answer, 'id') === draft.target_id ? answeredName : undefined) ?? draft.target_name ?? null,
      };
      const settled = { ...draft, organization_id: organizationId, ...fields };
      const written = recorded !== undefined && (await ports.complete(recorded.id, fields)) ? recorded : await ports.record(settled);
      await ports.announce(written, settled);
    } catch (error) {
      request.log.error({ err: error }, 'recording the audit event failed');
    }
    return payload;
  });
}
