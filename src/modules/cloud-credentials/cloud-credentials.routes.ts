import type { TSchema } from 'typebox';
import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { requireAccess, requirePrincipal } from '../../http/route-access.ts';
import { NoContent, OrganizationParams } from '../../protocol/wire.ts';
import {
  AwsCredentialsRequest,
  ClusterCredentials,
  ClusterCredentialsResponseList,
  CredentialsParams,
  GcpCredentialsRequest,
  OnPremiseCredentialsRequest,
  ScalewayCredentialsRequest,
} from './cloud-credentials.schemas.ts';
import type { CloudCredentialsService, CredentialProvider, CredentialsRequest } from './cloud-credentials.service.ts';

const TAGS = ['Cloud Provider Credentials'];

/** Each provider's paths and operation ids, as the reference names them. */
const PROVIDER_ROUTES: ReadonlyArray<{ provider: CredentialProvider; segment: string; operation: string; body: TSchema }> = [
  { provider: 'AWS', segment: 'aws', operation: 'AWSCredentials', body: AwsCredentialsRequest },
  { provider: 'SCW', segment: 'scaleway', operation: 'ScalewayCredentials', body: ScalewayCredentialsRequest },
  { provider: 'GCP', segment: 'gcp', operation: 'GcpCredentials', body: GcpCredentialsRequest },
  { provider: 'ON_PREMISE', segment: 'onPremise', operation: 'OnPremiseCredentials', body: OnPremiseCredentialsRequest },
];

export function registerCloudCredentialsRoutes(app: FastifyTypeBox, credentials: CloudCredentialsService): void {
  for (const { provider, segment, operation, body } of PROVIDER_ROUTES) {
    const collection = `/organization/:organizationId/${segment}/credentials`;
    const item = `${collection}/:credentialsId`;

    app.get(
      collection,
      {
        schema: {
          operationId: `list${operation}`,
          tags: TAGS,
          params: OrganizationParams,
          response: { 200: ClusterCredentialsResponseList, ...authenticatedErrors() },
        },
        config: { access: { permission: 'cloud-credentials:read', target: 'organization' } },
      },
      async (request) => ({ results: await credentials.listCredentials(provider, request.params.organizationId) }),
    );

    app.post(
      collection,
      {
        schema: {
          operationId: `create${operation}`,
          description: 'Registers credentials of the provider. Secrets are stored encrypted and never returned.',
          tags: TAGS,
          params: OrganizationParams,
          body,
          response: { 201: ClusterCredentials, ...authenticatedErrors('conflict') },
        },
        config: { access: { permission: 'cloud-credentials:create', target: 'organization' } },
      },
      async (request, reply) => {
        const created = await credentials.createCredentials(
          provider,
          requirePrincipal(request),
          requireAccess(request),
          request.body as CredentialsRequest,
        );
        return reply.code(HTTP_STATUS.created).send(created);
      },
    );

    app.get(
      item,
      {
        schema: {
          operationId: `get${operation}`,
          tags: TAGS,
          params: CredentialsParams,
          response: { 200: ClusterCredentials, ...authenticatedErrors() },
        },
        config: { access: { permission: 'cloud-credentials:read', target: 'organization' } },
      },
      async (request) => credentials.getCredentials(provider, request.params.organizationId, request.params.credentialsId),
    );

    app.put(
      item,
      {
        schema: {
          operationId: `edit${operation}`,
          description: 'Replaces the credentials, secrets included.',
          tags: TAGS,
          params: CredentialsParams,
          body,
          response: { 200: ClusterCredentials, ...authenticatedErrors('conflict') },
        },
        config: { access: { permission: 'cloud-credentials:update', target: 'organization' } },
      },
      async (request) =>
        credentials.editCredentials(provider, request.params.organizationId, request.params.credentialsId, request.body as CredentialsRequest),
    );

    app.delete(
      item,
      {
        schema: {
          operationId: `delete${operation}`,
          description: 'Deletes the credentials; 409 naming the clusters that still run on them.',
          tags: TAGS,
          params: CredentialsParams,
          response: { 204: NoContent, ...authenticatedErrors('conflict') },
        },
        config: { access: { permission: 'cloud-credentials:delete', target: 'organization' } },
      },
      async (request, reply) => {
        await credentials.removeCredentials(provider, request.params.organizationId, request.params.credentialsId);
        return reply.code(HTTP_STATUS.noContent).send(null);
      },
    );
  }
}
