import { Type } from 'typebox';
import { BaseFields, Description, ListOf, Name, Nullable, Timestamp, Uuid } from '../../protocol/wire.ts';

/** Largest policy source accepted; the engine also bounds rules and nesting (see policy/policy.engine.ts). */
export const MAX_POLICY_LENGTH = 64 * 1024;

const OpaPolicy = Type.String({ minLength: 1, maxLength: MAX_POLICY_LENGTH, pattern: '^[^\\x00]*$' });

/**
 * The reference's create request. `role_id` is accepted because existing clients send it, but a policy token
 * carries no role (SPEC.md): only null or absent is valid.
 */
export const OrganizationPolicyApiTokenCreateRequest = Type.Object(
  {
    name: Name,
    description: Type.Optional(Nullable(Description)),
    opa_policy: OpaPolicy,
    role_id: Type.Optional(Nullable(Uuid)),
    expires_at: Type.Optional(Nullable(Timestamp)),
  },
  {
    $id: 'OrganizationPolicyApiTokenCreateRequest',
    additionalProperties: false,
    examples: [
      {
        name: 'deploy-bot',
        description: 'Reads everything but secret values; creates projects named agent-*',
        opa_policy:
          'package agent\n\nallow if {\n\tinput.method == "GET"\n\tnot input.query.reveal\n}\n\n' +
          'allow if {\n\tinput.operation_id == "createProject"\n\tstartswith(input.body.name, "agent-")\n}\n',
        expires_at: null,
      },
    ],
  },
);

const tokenFields = {
  ...BaseFields,
  name: Type.String(),
  description: Type.Optional(Type.String()),
  opa_policy: Type.String(),
  creator_name: Nullable(Type.String()),
  expires_at: Nullable(Timestamp),
  /** The first characters of the value, to recognise a token; never the value itself. */
  token_start: Type.String(),
};

export const OrganizationPolicyApiToken = Type.Object(tokenFields, { $id: 'OrganizationPolicyApiToken' });
export const OrganizationPolicyApiTokenCreate = Type.Object(
  { ...tokenFields, token: Type.String() },
  { $id: 'OrganizationPolicyApiTokenCreate' },
);
export const OrganizationPolicyApiTokenResponseList = ListOf(OrganizationPolicyApiToken, 'OrganizationPolicyApiTokenResponseList');

export const PolicyTokenParams = Type.Object({ organizationId: Uuid, policyApiTokenId: Uuid }, { additionalProperties: false });

/** A dry run: what a policy decides for a given input document, before any token carries it. */
export const PolicyEvaluationRequest = Type.Object(
  { opa_policy: OpaPolicy, input: Type.Object({}, { additionalProperties: true }) },
  {
    $id: 'PolicyEvaluationRequest',
    additionalProperties: false,
    examples: [
      {
        opa_policy: 'package agent\n\nallow if {\n\tinput.operation_id == "createProject"\n\tstartswith(input.body.name, "agent-")\n}\n',
        input: { method: 'POST', operation_id: 'createProject', body: { name: 'agent-web' } },
      },
    ],
  },
);
export const PolicyEvaluationResponse = Type.Object(
  { allow: Type.Boolean(), reason: Type.String() },
  { $id: 'PolicyEvaluationResponse' },
);
