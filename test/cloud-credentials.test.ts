import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createAwsAccess } from '../src/aws/aws-access.ts';
import { systemClock } from '../src/lib/clock.ts';
import { createSecretBox } from '../src/lib/secret-box.ts';
import { createCloudCredentialsService } from '../src/modules/cloud-credentials/cloud-credentials.service.ts';
import { startTestAwsServer } from './support/aws-server.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * Cloud provider credentials (issue 7 part 5) through real HTTP requests on a real database: the reference's paths,
 * operation ids and ClusterCredentials shapes for AWS (all four request variants), Scaleway, GCP and on-premise;
 * secrets sealed at rest and never answered; names unique per organization; organizations and providers kept apart;
 * and the EcrAuthorizer port logging in to ECR with a stored credential through the real AWS SDK.
 */

const UNKNOWN_ID = '0190f0b2-6c5e-7000-8000-000000000000';
const aws = await startTestAwsServer();
afterAll(() => aws.close());

function secret(): string {
  return `s3cr3t/${uniqueName('value').replace(/-/g, '')}+Zq9`;
}

describe('AWS access (real SDK v3 against the local STS/ECR server)', () => {
  it('checks role credentials by assuming the role with Slipway\'s own identity, the organization as ExternalId', async () => {
    const platform = aws.addKey('111122223333');
    const access = createAwsAccess({ endpointUrl: aws.url, platformCredentials: platform });
    const credential = { name: 'role', organizationId: 'org-for-external-id', accessKeyId: null, secretAccessKey: null, roleArn: 'arn:aws:iam::444455556666:role/slipway' };
    const identity = await access.checkClusterCredentials(credential, 'ap-south-1');
    expect(identity).toEqual({ accountId: '444455556666', arn: 'arn:aws:sts::444455556666:assumed-role/slipway/slipway' });
    const assumed = aws.assumedRoles.find((role) => role.by === platform.accessKeyId);
    expect(assumed).toMatchObject({ roleArn: credential.roleArn, externalId: 'org-for-external-id' });
    // Every check after AssumeRole is signed with the temporary key and its session token (the server refuses it otherwise).
    expect(aws.calls.filter((call) => call.accessKeyId === assumed?.accessKeyId).map((call) => `${call.action}@${call.region}:${call.answered}`)).toEqual([
      'GetCallerIdentity@us-east-1:ok',
      'DescribeRepositories@us-east-1:ok',
      'DescribeRepositories@ap-south-1:ok',
    ]);
    const login = await access.authorizeEcr(credential, 'ap-south-1');
    expect(login.registryUrl).toBe('https://444455556666.dkr.ecr.ap-south-1.amazonaws.com');
  });

  it('answers a refused AssumeRole as 400, and an unreadable answer or an endpoint that cannot be reached as 503', async () => {
    const platform = aws.addKey('111122223333');
    const credential = { name: 'role', organizationId: 'o', accessKeyId: null, secretAccessKey: null, roleArn: 'arn:aws:iam::444455556666:role/slipway' };
    aws.setRules([{ service: 'sts', behaviour: { kind: 'refuse', code: 'AccessDenied' } }]);
    try {
      await expect(createAwsAccess({ endpointUrl: aws.url, platformCredentials: platform }).checkClusterCredentials(credential, 'us-east-1')).rejects.toMatchObject({
        kind: 'bad_request',
        message: expect.stringContaining('STS AssumeRole: AccessDenied'),
      });
    } finally {
      aws.setRules([]);
    }
    const staticKeys = aws.addKey('111122223333');
    for (const service of ['sts', 'ecr'] as const) {
      aws.setRules([{ service, behaviour: { kind: 'garbage' } }]);
      try {
        await expect(
          createAwsAccess({ endpointUrl: aws.url }).checkClusterCredentials({ name: 'static', organizationId: 'o', ...staticKeys, roleArn: null }, 'us-east-1'),
        ).rejects.toMatchObject({ kind: 'unavailable' });
      } finally {
        aws.setRules([]);
      }
    }
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const keys = aws.addKey('111122223333');
    await expect(
      createAwsAccess({ endpointUrl: deadUrl }).checkClusterCredentials({ name: 'static', organizationId: 'o', ...keys, roleArn: null }, 'us-east-1'),
    ).rejects.toMatchObject({ kind: 'unavailable' });
  });
});

describeEachDatabase(
  'cloud credentials',
  (ctx) => {
    let owner: TestUser;
    let organizationId: string;

    const url = (segment: string, id?: string) => `/organization/${organizationId}/${segment}/credentials${id === undefined ? '' : `/${id}`}`;

    it('sets up an owner and an organization', async () => {
      ({ owner, organizationId } = await ctx().signUpWithOrganization());
    });

    it('creates, lists, reads, edits and deletes AWS static credentials; the secret is sealed and never answered', async () => {
      const secretAccessKey = secret();
      const name = uniqueName('aws');
      const created = await ctx().call(owner.auth, {
        method: 'POST',
        url: url('aws'),
        payload: { type: 'AWS_STATIC', name, access_key_id: 'AKIAIOSFODNN7EXAMPLE', secret_access_key: secretAccessKey },
      });
      expect(created.statusCode, created.body).toBe(201);
      const view = created.json<{ id: string }>();
      expect(view).toEqual({ id: view.id, name, access_key_id: 'AKIAIOSFODNN7EXAMPLE', object_type: 'AWS' });
      expect(created.body).not.toContain(secretAccessKey);

      const row = await ctx().database.db.selectFrom('cloud_credentials').selectAll().where('id', '=', view.id).executeTakeFirstOrThrow();
      expect(row.secret_envelope).toMatch(/^v1\./);
      expect(JSON.stringify(row)).not.toContain(secretAccessKey);

      const list = await ctx().call(owner.auth, { method: 'GET', url: url('aws') });
      expect(list.statusCode).toBe(200);
      expect(list.json()).toEqual({ results: [view] });
      const read = await ctx().call(owner.auth, { method: 'GET', url: url('aws', view.id) });
      expect(read.json()).toEqual(view);

      const edited = await ctx().call(owner.auth, {
        method: 'PUT',
        url: url('aws', view.id),
        payload: { type: 'AWS_ROLE', name: `${name}-role`, role_arn: 'arn:aws:iam::123456789012:role/slipway' },
      });
      expect(edited.statusCode, edited.body).toBe(200);
      expect(edited.json()).toEqual({ id: view.id, name: `${name}-role`, role_arn: 'arn:aws:iam::123456789012:role/slipway', object_type: 'AWS_ROLE' });
      const afterEdit = await ctx().database.db.selectFrom('cloud_credentials').selectAll().where('id', '=', view.id).executeTakeFirstOrThrow();
      expect(afterEdit.secret_envelope).toBeNull();

      const removed = await ctx().call(owner.auth, { method: 'DELETE', url: url('aws', view.id) });
      expect(removed.statusCode).toBe(204);
      expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: url('aws', view.id) }), 404);
      expectErrorBody(await ctx().call(owner.auth, { method: 'DELETE', url: url('aws', view.id) }), 404);
    });

    it('answers the EKS Anywhere variants as EKS_ANYWHERE_VSPHERE without their passwords', async () => {
      const password = secret();
      const staticOne = await ctx().call(owner.auth, {
        method: 'POST',
        url: url('aws'),
        payload: {
          type: 'EKS_ANYWHERE_VSPHERE_STATIC',
          name: uniqueName('eksa'),
          vsphere_user: 'administrator@vsphere.local',
          vsphere_password: password,
          access_key_id: 'AKIAIOSFODNN7EXAMPLE',
          secret_access_key: secret(),
        },
      });
      expect(staticOne.statusCode, staticOne.body).toBe(201);
      expect(staticOne.json()).toMatchObject({
        vsphere_user: 'administrator@vsphere.local',
        access_key_id: 'AKIAIOSFODNN7EXAMPLE',
        role_arn: null,
        object_type: 'EKS_ANYWHERE_VSPHERE',
      });
      expect(staticOne.body).not.toContain(password);
      const roleOne = await ctx().call(owner.auth, {
        method: 'POST',
        url: url('aws'),
        payload: {
          type: 'EKS_ANYWHERE_VSPHERE_ROLE',
          name: uniqueName('eksa'),
          vsphere_user: 'ops',
          vsphere_password: password,
          role_arn: 'arn:aws:iam::123456789012:role/eksa',
        },
      });
      expect(roleOne.statusCode, roleOne.body).toBe(201);
      expect(roleOne.json()).toMatchObject({ access_key_id: null, role_arn: 'arn:aws:iam::123456789012:role/eksa', object_type: 'EKS_ANYWHERE_VSPHERE' });
    });

    it('refuses invalid bodies with 400: unknown type, missing secret, extra fields, malformed key id or role ARN', async () => {
      for (const payload of [
        { type: 'AWS_MAGIC', name: 'x', access_key_id: 'AKIAIOSFODNN7EXAMPLE', secret_access_key: 'y' },
        { type: 'AWS_STATIC', name: 'x', access_key_id: 'AKIAIOSFODNN7EXAMPLE' },
        { type: 'AWS_STATIC', name: 'x', access_key_id: 'AKIAIOSFODNN7EXAMPLE', secret_access_key: 'y', region: 'eu-west-3' },
        { type: 'AWS_STATIC', name: 'x', access_key_id: 'not a key', secret_access_key: 'y' },
        { type: 'AWS_ROLE', name: 'x', role_arn: 'arn:aws:iam::12:user/x' },
        { type: 'AWS_ROLE', name: '   ', role_arn: 'arn:aws:iam::123456789012:role/x' },
      ]) {
        expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url: url('aws'), payload }), 400);
      }
    });

    it('keeps names unique per organization, across providers and case (409), also when two creates race', async () => {
      const name = uniqueName('Shared');
      const first = await ctx().call(owner.auth, { method: 'POST', url: url('onPremise'), payload: { name } });
      expect(first.statusCode, first.body).toBe(201);
      expect(first.json()).toEqual({ id: first.json<{ id: string }>().id, name, object_type: 'OTHER' });
      expectErrorBody(
        await ctx().call(owner.auth, {
          method: 'POST',
          url: url('aws'),
          payload: { type: 'AWS_STATIC', name: ` ${name.toUpperCase()} `, access_key_id: 'AKIAIOSFODNN7EXAMPLE', secret_access_key: secret() },
        }),
        409,
      );
      const raced = uniqueName('raced');
      const answers = await Promise.all(
        [1, 2, 3].map(() => ctx().call(owner.auth, { method: 'POST', url: url('onPremise'), payload: { name: raced } })),
      );
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 409, 409]);
      const other = await ctx().call(owner.auth, { method: 'POST', url: url('onPremise'), payload: { name: uniqueName('other') } });
      const otherId = other.json<{ id: string }>().id;
      expectErrorBody(await ctx().call(owner.auth, { method: 'PUT', url: url('onPremise', otherId), payload: { name } }), 409);
    });

    it('keeps providers apart: an on-premise credential is not found on the AWS paths', async () => {
      const onPremise = await ctx().call(owner.auth, { method: 'POST', url: url('onPremise'), payload: { name: uniqueName('op') } });
      const id = onPremise.json<{ id: string }>().id;
      expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: url('aws', id) }), 404);
      expectErrorBody(await ctx().call(owner.auth, { method: 'DELETE', url: url('aws', id) }), 404);
      const awsList = await ctx().call(owner.auth, { method: 'GET', url: url('aws') });
      expect(awsList.json<{ results: { id: string }[] }>().results.map((c) => c.id)).not.toContain(id);
    });

    it('stores Scaleway and GCP credentials with the reference shapes, secrets never answered', async () => {
      const scalewaySecret = secret();
      const scaleway = await ctx().call(owner.auth, {
        method: 'POST',
        url: url('scaleway'),
        payload: {
          name: uniqueName('scw'),
          scaleway_access_key: 'SCWXXXXXXXXXXXXXXXXX',
          scaleway_secret_key: scalewaySecret,
          scaleway_project_id: 'p-1',
          scaleway_organization_id: 'o-1',
        },
      });
      expect(scaleway.statusCode, scaleway.body).toBe(201);
      expect(scaleway.json()).toMatchObject({ scaleway_access_key: 'SCWXXXXXXXXXXXXXXXXX', scaleway_project_id: 'p-1', scaleway_organization_id: 'o-1', object_type: 'SCW' });
      expect(scaleway.body).not.toContain(scalewaySecret);

      const key = JSON.stringify({ type: 'service_account', private_key: secret() });
      const gcp = await ctx().call(owner.auth, { method: 'POST', url: url('gcp'), payload: { name: uniqueName('gcp'), gcp_credentials: key } });
      expect(gcp.statusCode, gcp.body).toBe(201);
      expect(Object.keys(gcp.json()).sort()).toEqual(['id', 'name', 'object_type']);
      expect(gcp.json()).toMatchObject({ object_type: 'GCP' });
      expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url: url('gcp'), payload: { name: uniqueName('gcp'), gcp_credentials: 'not json' } }), 400);

      const wif = await ctx().call(owner.auth, {
        method: 'POST',
        url: url('gcp'),
        payload: {
          name: uniqueName('wif'),
          credential_type: 'WORKLOAD_IDENTITY_FEDERATION',
          service_account_email: 'deployer@project.iam.gserviceaccount.com',
          workload_identity_provider_resource: 'projects/123456/locations/global/workloadIdentityPools/pool/providers/slipway',
        },
      });
      expect(wif.statusCode, wif.body).toBe(201);
      expect(wif.json()).toMatchObject({ object_type: 'GCP_WORKLOAD_IDENTITY_FEDERATION', project_id: '123456', token_lifetime_seconds: 3600 });
    });

    it("answers 404 for another organization's credentials and for unknown ids, without revealing them", async () => {
      const created = await ctx().call(owner.auth, {
        method: 'POST',
        url: url('aws'),
        payload: { type: 'AWS_STATIC', name: uniqueName('mine'), access_key_id: 'AKIAIOSFODNN7EXAMPLE', secret_access_key: secret() },
      });
      const id = created.json<{ id: string }>().id;
      const stranger = await ctx().signUpWithOrganization();
      const theirs = `/organization/${stranger.organizationId}/aws/credentials/${id}`;
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'GET', url: theirs }), 404);
      expectErrorBody(
        await ctx().call(stranger.owner.auth, {
          method: 'PUT',
          url: theirs,
          payload: { type: 'AWS_ROLE', name: 'stolen', role_arn: 'arn:aws:iam::123456789012:role/x' },
        }),
        404,
      );
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'DELETE', url: theirs }), 404);
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'GET', url: url('aws', id) }), 404);
      expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: url('aws', UNKNOWN_ID) }), 404);
      const stillThere = await ctx().call(owner.auth, { method: 'GET', url: url('aws', id) });
      expect(stillThere.statusCode).toBe(200);
    });

    it('lets a VIEWER read credentials but not manage them (403)', async () => {
      const viewer = await ctx().signUp();
      await ctx().addMemberDirectly(organizationId, viewer, 'VIEWER');
      expect((await ctx().call(viewer.auth, { method: 'GET', url: url('aws') })).statusCode).toBe(200);
      expectErrorBody(await ctx().call(viewer.auth, { method: 'POST', url: url('onPremise'), payload: { name: uniqueName('v') } }), 403);
    });

    it('logs in to ECR with a stored credential through the EcrAuthorizer port (real SDK, signature checked)', async () => {
      const key = aws.addKey('210987654321');
      const service = createCloudCredentialsService({
        db: ctx().database.db,
        otherUsers: async () => [],
        clock: systemClock,
        secrets: createSecretBox(Buffer.alloc(32, 1)),
        aws: createAwsAccess({ endpointUrl: aws.url }),
      });
      const principal = { kind: 'user', userId: owner.id, email: owner.email, name: null } as const;
      const stored = await service.createCredentials('AWS', principal, { organizationId, grants: new Set(), roleName: 'OWNER' }, {
        type: 'AWS_STATIC',
        name: uniqueName('ecr'),
        access_key_id: key.accessKeyId,
        secret_access_key: key.secretAccessKey,
      });
      const login = await service.authorizeEcr(organizationId, stored.id, 'eu-west-3');
      expect(login).toEqual({ registryUrl: 'https://210987654321.dkr.ecr.eu-west-3.amazonaws.com', username: 'AWS', password: `ecr-password-${key.accessKeyId}` });
      expect(aws.calls.filter((call) => call.accessKeyId === key.accessKeyId)).toEqual([
        { service: 'ecr', action: 'GetAuthorizationToken', region: 'eu-west-3', accessKeyId: key.accessKeyId, answered: 'ok' },
      ]);
      await expect(service.authorizeEcr(organizationId, UNKNOWN_ID, 'eu-west-3')).rejects.toMatchObject({ kind: 'bad_request' });
      const stranger = await ctx().signUpWithOrganization();
      await expect(service.authorizeEcr(stranger.organizationId, stored.id, 'eu-west-3')).rejects.toMatchObject({ kind: 'bad_request' });
      // Sealed under this key: a server whose key changed cannot open it, and says so as a 400.
      const rekeyed = createCloudCredentialsService({
        db: ctx().database.db,
        otherUsers: async () => [],
        clock: systemClock,
        secrets: createSecretBox(Buffer.alloc(32, 2)),
        aws: createAwsAccess({ endpointUrl: aws.url }),
      });
      await expect(rekeyed.authorizeEcr(organizationId, stored.id, 'eu-west-3')).rejects.toMatchObject({ kind: 'bad_request' });
    });
  },
  { awsEndpointUrl: aws.url },
);
