import type { TSchema } from 'typebox';
import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { requireAccess, requirePrincipal } from '../../http/route-access.ts';
import { NoContent, OrganizationParams } from '../../protocol/wire.ts';
import {
  AwsCredentialsRequest,
  AzureCredentialsRequest,
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
const PROVIDER_ROUTES: ReadonlyArray<{ provider: CredentialProvider; label: string; segment: string; operation: string; body: TSchema }> = [
  { provider: 'AWS', label: 'AWS', segment: 'aws', operation: 'AWSCredentials', body: AwsCredentialsRequest },
  { provider: 'SCW', label: 'Scaleway', segment: 'scaleway', operation: 'ScalewayCredentials', body: ScalewayCredentialsRequest },
  { provider: 'GCP', label: 'GCP', segment: 'gcp', operation: 'GcpCredentials', body: GcpCredentialsRequest },
  { provider: 'ON_PREMISE', label: 'on-premise', segment: 'onPremise', operation: 'OnPremiseCredentials', body: OnPremiseCredentialsRequest },
  { provider: 'AZURE', label: 'Azure', segment: 'azure', operation: 'AzureCredentials', body: AzureCredentialsRequest },
];

export function registerCloudCredentialsRoutes(app: FastifyTypeBox, credentials: CloudCredentialsService): void {
  for (const { provider, label, segment, operation, body } of PROVIDER_ROUTES) {
    const collection = `/organization/:organizationId/${segment}/credentials`;
    const item = `${collection}/:credentialsId`;

    app.get(
      collection,
      {
        schema: {
          operationId: `list${operation}`,
          summary: `List the ${label} credentials`,
          description: `The organization's ${label} credentials, oldest first, without their secrets.`,
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
          summary: `Register ${label} credentials`,
          description:
            `Registers ${label} credentials; secrets are stored encrypted and never returned. 400 for an invalid body, ` +
            '409 when a credential of any provider has the name already.',
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
          summary: `Get ${label} credentials`,
          description: `One ${label} credential, without its secrets; 404 for another provider's or another organization's.`,
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
          summary: `Replace ${label} credentials`,
          description: 'Replaces the credentials, secrets included (400 for an invalid body, 409 for a name taken, 404 for unknown ids).',
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
          summary: `Delete ${label} credentials`,
          description: 'Deletes the credentials; 409 naming the clusters (or registries) that still use them.',
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
