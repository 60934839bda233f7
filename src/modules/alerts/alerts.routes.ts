import type { FastifyRequest } from 'fastify';
import type { Permission } from '../../auth/permissions.ts';
import type { Access, Principal } from '../../auth/principal.ts';
import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { requirePrincipal, type RouteAccess } from '../../http/route-access.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { isUuid } from '../../lib/ids.ts';
import { NoContent, OrganizationParams } from '../../protocol/wire.ts';
import {
  AlertReceiverCreationRequest,
  AlertReceiverCreationValidationRequest,
  AlertReceiverEditRequest,
  AlertReceiverList,
  AlertReceiverParams,
  AlertReceiverResponse,
  AlertReceiverValidation,
  AlertReceiverValidationRequest,
  AlertRuleCreationRequest,
  AlertRuleEditRequest,
  AlertRuleList,
  AlertRuleParams,
  AlertRuleResponse,
} from './alerts.schemas.ts';
import type { AlertsService } from './alerts.service.ts';

/** The authorizer (src/http/authorize.ts) with an explicit target id. */
export type OrganizationAuthorizer = (
  request: FastifyRequest,
  principal: Principal,
  access: Exclude<RouteAccess, { public: true }>,
  targetId?: string,
) => Promise<Access | undefined>;

export interface AlertRouteDeps {
  alerts: AlertsService;
  authorize: OrganizationAuthorizer;
}

const RECEIVER_TAGS = ['Alert Receivers'];
const RULE_TAGS = ['Alert Rules'];

type AlertPermission = Extract<Permission, `alert-${string}`>;

/**
 * Most of these operations name their organization in the body (`organization_id`) or through the stored receiver or
 * rule their path names, not in the path. Their routes declare the permission with target `none`; a route-level
 * preValidation hook finds the organization and asks the authorizer there, before validation and before anything is
 * read or written, as the unified /variable routes do: another organization's receiver or rule answers 404 exactly
 * like one that does not exist, a missing permission 403. A body whose organization_id is malformed is left to
 * validation (400), and located in the handler should validation accept a spelling the hook did not.
 */
function handlerAccess(permission: AlertPermission) {
  return { access: { permission, target: 'none' as const, ownerFoundByHandler: true as const } };
}

const located = new WeakMap<FastifyRequest, Promise<string>>();

function rawRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

function rawUuid(value: unknown): string | undefined {
  return typeof value === 'string' && isUuid(value) ? value : undefined;
}

export function registerAlertRoutes(app: FastifyTypeBox, deps: AlertRouteDeps): void {
  const { alerts } = deps;

  /** Authorizes `permission` in the organization; an unknown or foreign one answers `missing` (404) when given. */
  async function authorizeIn(request: FastifyRequest, permission: AlertPermission, organizationId: string, missing?: string): Promise<string> {
    let access: Access | undefined;
    try {
      access = await deps.authorize(request, requirePrincipal(request), { permission, target: 'organization' }, organizationId);
    } catch (error) {
      if (missing !== undefined && error instanceof AppError && error.kind === 'not_found') throw notFound(missing);
      throw error;
    }
    if (access === undefined) throw new Error('an organization target always names an organization');
    request.access = access;
    return access.organizationId;
  }

  function once(request: FastifyRequest, locate: () => Promise<string>): Promise<string> {
    let organization = located.get(request);
    if (organization === undefined) {
      organization = locate();
      located.set(request, organization);
    }
    return organization;
  }

  /** The organization of a stored receiver or rule, with the caller authorized there. */
  function ownerOf(request: FastifyRequest, permission: AlertPermission, noun: 'alert receiver' | 'alert rule', id: string): Promise<string> {
    return once(request, async () => {
      const missing = `${noun} ${id} not found`;
      const organizationId = noun === 'alert receiver' ? await alerts.receiverOrganization(id) : await alerts.ruleOrganization(id);
      if (organizationId === undefined) throw notFound(missing);
      return authorizeIn(request, permission, organizationId, missing);
    });
  }

  function inBody(request: FastifyRequest, permission: AlertPermission, organizationId: string): Promise<string> {
    return once(request, () => authorizeIn(request, permission, organizationId));
  }

  const receiverHook = (permission: AlertPermission) => async (request: FastifyRequest) => {
    const id = rawUuid(rawRecord(request.params).alertReceiverId);
    if (id !== undefined) await ownerOf(request, permission, 'alert receiver', id);
  };
  const ruleHook = (permission: AlertPermission) => async (request: FastifyRequest) => {
    const id = rawUuid(rawRecord(request.params).alertRuleId);
    if (id !== undefined) await ownerOf(request, permission, 'alert rule', id);
  };
  const bodyHook = (permission: AlertPermission, path: 'direct' | 'alert_receiver') => async (request: FastifyRequest) => {
    const body = rawRecord(request.body);
    const organizationId = rawUuid(path === 'direct' ? body.organization_id : rawRecord(body.alert_receiver).organization_id);
    if (organizationId !== undefined) await inBody(request, permission, organizationId);
  };

  app.get(
    '/organization/:organizationId/alert-receivers',
    {
      schema: {
        operationId: 'getAlertReceivers',
        summary: "List the organization's alert receivers",
        description: 'Every receiver of the organization by name. Secrets are never answered: a SLACK receiver shows only the scheme and host of its webhook URL, an EMAIL receiver whether it has a password.',
        tags: RECEIVER_TAGS,
        params: OrganizationParams,
        response: { 200: AlertReceiverList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'alert-receivers:read', target: 'organization' } },
    },
    async (request) => alerts.getAlertReceivers(request.params.organizationId),
  );

  app.post(
    '/alert-receivers',
    {
      schema: {
        operationId: 'createAlertReceiver',
        summary: 'Create an alert receiver',
        description:
          'A place alerts are sent to in the organization named by organization_id: EMAIL through the given SMTP smarthost, or SLACK, an incoming webhook (webhook_format SLACK posts a Slack message, GENERIC the signed alert JSON; both are signed with Standard Webhooks headers, the secret answered once here). The webhook URL and the SMTP password are sealed at rest and never answered. 400 for a URL that is not https (or http where private hosts are allowed), carries credentials or reaches a loopback or private address, and for a bad smarthost; 404 for an organization of someone else; 409 for a name already used.',
        tags: RECEIVER_TAGS,
        body: AlertReceiverCreationRequest,
        response: { 201: AlertReceiverResponse, ...authenticatedErrors('conflict') },
      },
      config: handlerAccess('alert-receivers:create'),
      preValidation: bodyHook('alert-receivers:create', 'direct'),
    },
    async (request, reply) => {
      const organizationId = await inBody(request, 'alert-receivers:create', request.body.organization_id);
      return reply.code(HTTP_STATUS.created).send(await alerts.createAlertReceiver(organizationId, request.body));
    },
  );

  app.post(
    '/alert-receivers/validate',
    {
      schema: {
        operationId: 'validateNewAlertReceiver',
        summary: 'Send a test message to an alert receiver before creating it',
        description:
          'Sends `message` (or a default text) to the receiver described, storing nothing, and answers whether it was delivered and, if not, why (refused address, timeout, the receiver’s status, the SMTP server’s answer) with 200. The description is checked as on creation: 400 for bad input, 404 for an organization of someone else.',
        tags: RECEIVER_TAGS,
        body: AlertReceiverCreationValidationRequest,
        response: { 200: AlertReceiverValidation, ...authenticatedErrors() },
      },
      config: handlerAccess('alert-receivers:validate'),
      preValidation: bodyHook('alert-receivers:validate', 'alert_receiver'),
    },
    async (request) => {
      const organizationId = await inBody(request, 'alert-receivers:validate', request.body.alert_receiver.organization_id);
      return alerts.validateNewAlertReceiver(organizationId, request.body.alert_receiver, request.body.message);
    },
  );

  app.get(
    '/alert-receivers/:alertReceiverId',
    {
      schema: {
        operationId: 'getAlertReceiver',
        summary: 'Get an alert receiver',
        description: 'One receiver, without its secrets. 404 when it does not exist or is another organization’s.',
        tags: RECEIVER_TAGS,
        params: AlertReceiverParams,
        response: { 200: AlertReceiverResponse, ...authenticatedErrors() },
      },
      config: handlerAccess('alert-receivers:read'),
      preValidation: receiverHook('alert-receivers:read'),
    },
    async (request) => {
      const id = request.params.alertReceiverId;
      return alerts.getAlertReceiver(await ownerOf(request, 'alert-receivers:read', 'alert receiver', id), id);
    },
  );

  app.put(
    '/alert-receivers/:alertReceiverId',
    {
      schema: {
        operationId: 'editAlertReceiver',
        summary: 'Edit an alert receiver',
        description:
          'Replaces the receiver’s settings. A SLACK receiver keeps its webhook URL (and signing secret) unless new ones are given; an EMAIL receiver keeps its password when auth_password is absent or null, and loses it when it is empty. The type cannot change (400). 404 when the receiver does not exist or is another organization’s; 409 for a name already used.',
        tags: RECEIVER_TAGS,
        params: AlertReceiverParams,
        body: AlertReceiverEditRequest,
        response: { 200: AlertReceiverResponse, ...authenticatedErrors('conflict') },
      },
      config: handlerAccess('alert-receivers:update'),
      preValidation: receiverHook('alert-receivers:update'),
    },
    async (request) => {
      const id = request.params.alertReceiverId;
      return alerts.editAlertReceiver(await ownerOf(request, 'alert-receivers:update', 'alert receiver', id), id, request.body);
    },
  );

  app.delete(
    '/alert-receivers/:alertReceiverId',
    {
      schema: {
        operationId: 'deleteAlertReceiver',
        summary: 'Delete an alert receiver',
        description: 'Removes the receiver and takes it off every rule (a rule left with no receiver is UNROUTED when it fires). 404 when it does not exist or is another organization’s.',
        tags: RECEIVER_TAGS,
        params: AlertReceiverParams,
        response: { 204: NoContent, ...authenticatedErrors() },
      },
      config: handlerAccess('alert-receivers:delete'),
      preValidation: receiverHook('alert-receivers:delete'),
    },
    async (request, reply) => {
      const id = request.params.alertReceiverId;
      await alerts.deleteAlertReceiver(await ownerOf(request, 'alert-receivers:delete', 'alert receiver', id), id);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );

  app.post(
    '/alert-receivers/:alertReceiverId/validate',
    {
      schema: {
        operationId: 'validateExistingAlertReceiver',
        summary: 'Send a test message to an alert receiver',
        description:
          'Sends `message` (or a default text) to the stored receiver and answers whether it was delivered and, if not, why (refused address, timeout, the receiver’s status, the SMTP server’s answer) with 200. 404 when the receiver does not exist or is another organization’s.',
        tags: RECEIVER_TAGS,
        params: AlertReceiverParams,
        body: AlertReceiverValidationRequest,
        response: { 200: AlertReceiverValidation, ...authenticatedErrors() },
      },
      config: handlerAccess('alert-receivers:validate'),
      preValidation: receiverHook('alert-receivers:validate'),
    },
    async (request) => {
      const id = request.params.alertReceiverId;
      return alerts.validateExistingAlertReceiver(await ownerOf(request, 'alert-receivers:validate', 'alert receiver', id), id, request.body.message);
    },
  );

  const RULE_ERRORS =
    'The condition is kind BUILT with promql deployment_failed, workload_failed or workload_restarts (docs/alerts.md); CUSTOM PromQL and CPU or memory measures answer 400 saying why, as do a for_duration that is not an ISO 8601 duration of at most 7 days, an operator without threshold, and receivers that are not the organization’s.';

  app.get(
    '/organization/:organizationId/alert-rules',
    {
      schema: {
        operationId: 'getAlertRules',
        summary: "List the organization's alert rules",
        description: 'Every rule by name, with its state as the last evaluation left it and its newest firings (`firings`, an addition).',
        tags: RULE_TAGS,
        params: OrganizationParams,
        response: { 200: AlertRuleList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'alert-rules:read', target: 'organization' } },
    },
    async (request) => alerts.getAlertRules(request.params.organizationId),
  );

  app.post(
    '/alert-rules',
    {
      schema: {
        operationId: 'createAlertRule',
        summary: 'Create an alert rule',
        description: `A rule of the organization named by organization_id, on its cluster cluster_id, watching the target (the cluster itself, an environment or a service on that cluster). Evaluated every minute: once the condition has held for for_duration the rule fires and its receivers are notified; when it stops holding, those with send_resolved hear that it resolved. ${RULE_ERRORS} 400 also for a cluster or target that is not the organization’s or not on that cluster; 404 for an organization of someone else; 409 for a name already used.`,
        tags: RULE_TAGS,
        body: AlertRuleCreationRequest,
        response: { 201: AlertRuleResponse, ...authenticatedErrors('conflict') },
      },
      config: handlerAccess('alert-rules:create'),
      preValidation: bodyHook('alert-rules:create', 'direct'),
    },
    async (request, reply) => {
      const organizationId = await inBody(request, 'alert-rules:create', request.body.organization_id);
      return reply.code(HTTP_STATUS.created).send(await alerts.createAlertRule(organizationId, request.body));
    },
  );

  app.get(
    '/alert-rules/:alertRuleId',
    {
      schema: {
        operationId: 'getAlertRule',
        summary: 'Get an alert rule',
        description: 'One rule with its state and newest firings. 404 when it does not exist or is another organization’s.',
        tags: RULE_TAGS,
        params: AlertRuleParams,
        response: { 200: AlertRuleResponse, ...authenticatedErrors() },
      },
      config: handlerAccess('alert-rules:read'),
      preValidation: ruleHook('alert-rules:read'),
    },
    async (request) => {
      const id = request.params.alertRuleId;
      return alerts.getAlertRule(await ownerOf(request, 'alert-rules:read', 'alert rule', id), id);
    },
  );

  app.put(
    '/alert-rules/:alertRuleId',
    {
      schema: {
        operationId: 'editAlertRule',
        summary: 'Edit an alert rule',
        description: `Replaces the rule’s settings (its cluster and target stay); the condition is judged afresh from the next evaluation, and a rule disabled is SUPPRESSED (a firing it had ends without a resolution notice). ${RULE_ERRORS} 404 when it does not exist or is another organization’s; 409 for a name already used.`,
        tags: RULE_TAGS,
        params: AlertRuleParams,
        body: AlertRuleEditRequest,
        response: { 200: AlertRuleResponse, ...authenticatedErrors('conflict') },
      },
      config: handlerAccess('alert-rules:update'),
      preValidation: ruleHook('alert-rules:update'),
    },
    async (request) => {
      const id = request.params.alertRuleId;
      return alerts.editAlertRule(await ownerOf(request, 'alert-rules:update', 'alert rule', id), id, request.body);
    },
  );

  app.delete(
    '/alert-rules/:alertRuleId',
    {
      schema: {
        operationId: 'deleteAlertRule',
        summary: 'Delete an alert rule',
        description: 'Removes the rule and its firing history. 404 when it does not exist or is another organization’s.',
        tags: RULE_TAGS,
        params: AlertRuleParams,
        response: { 204: NoContent, ...authenticatedErrors() },
      },
      config: handlerAccess('alert-rules:delete'),
      preValidation: ruleHook('alert-rules:delete'),
    },
    async (request, reply) => {
      const id = request.params.alertRuleId;
      await alerts.deleteAlertRule(await ownerOf(request, 'alert-rules:delete', 'alert rule', id), id);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );
}
