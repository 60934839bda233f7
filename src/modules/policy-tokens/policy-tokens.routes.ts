import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { requireAccess, requirePrincipal } from '../../http/route-access.ts';
import { NoContent, OrganizationParams } from '../../protocol/wire.ts';
import {
  OrganizationPolicyApiTokenCreate,
  OrganizationPolicyApiTokenCreateRequest,
  OrganizationPolicyApiTokenResponseList,
  PolicyEvaluationRequest,
  PolicyEvaluationResponse,
  PolicyTokenParams,
} from './policy-tokens.schemas.ts';
import type { PolicyTokensService } from './policy-tokens.service.ts';

const TAGS = ['Organization Policy Api Token'];

export function registerPolicyTokenRoutes(app: FastifyTypeBox, tokens: PolicyTokensService): void {
  app.get(
    '/organization/:organizationId/policyApiToken',
    {
      schema: {
        operationId: 'listOrganizationPolicyApiTokens',
        summary: 'List policy API tokens',
        description: "The organization's policy API tokens with their policy, creator and expiry; never their value. 404 when the caller is not a member.",
        tags: TAGS,
        params: OrganizationParams,
        response: { 200: OrganizationPolicyApiTokenResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'policy-tokens:read', target: 'organization' } },
    },
    async (request) => ({ results: await tokens.listOrganizationPolicyTokens(request.params.organizationId) }),
  );

  app.post(
    '/organization/:organizationId/policyApiToken',
    {
      schema: {
        operationId: 'createOrganizationPolicyApiToken',
        summary: 'Create a policy API token',
        description:
          'Creates a token whose every request is decided by the Open Policy Agent (Rego) policy it carries, within its ' +
          "creator's rights; it has no role. The policy is compiled first. The value is answered here once. 400 when the " +
          'policy does not compile or a role_id is given; 403 when a policy token tries to create one; 409 when a policy ' +
          'token of that name exists.',
        tags: TAGS,
        params: OrganizationParams,
        body: OrganizationPolicyApiTokenCreateRequest,
        response: { 201: OrganizationPolicyApiTokenCreate, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'policy-tokens:create', target: 'organization' } },
    },
    async (request, reply) => {
      const created = await tokens.createPolicyToken(requirePrincipal(request), requireAccess(request), request.body);
      return reply.code(HTTP_STATUS.created).header('cache-control', 'no-store').send(created);
    },
  );

  app.post(
    '/organization/:organizationId/policyApiToken/evaluate',
    {
      schema: {
        operationId: 'evaluateOrganizationPolicyApiTokenPolicy',
        summary: 'Try a policy',
        description: 'Dry run: the decision a policy would give for an input document, without creating a token.',
        tags: TAGS,
        params: OrganizationParams,
        body: PolicyEvaluationRequest,
        response: { 200: PolicyEvaluationResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'policy-tokens:read', target: 'organization' } },
    },
    async (request) => tokens.evaluatePolicy(request.body.opa_policy, request.body.input),
  );

  app.delete(
    '/organization/:organizationId/policyApiToken/:policyApiTokenId',
    {
      schema: {
        operationId: 'deleteOrganizationPolicyApiToken',
        summary: 'Revoke a policy API token',
        description: 'Deletes the token; requests made with it answer 401 from then on. 404 when there is no such token in the organization.',
        tags: TAGS,
        params: PolicyTokenParams,
        response: { 204: NoContent, ...authenticatedErrors() },
      },
      config: { access: { permission: 'policy-tokens:delete', target: 'organization' } },
    },
    async (request, reply) => {
      await tokens.revokePolicyToken(request.params.organizationId, request.params.policyApiTokenId);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );
}
