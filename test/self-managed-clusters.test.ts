import { createServer } from 'node:http';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { startTestAwsServer } from './support/aws-server.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestApp, type TestUser } from './support/test-app.ts';

/**
 * createSelfManagedCluster (SPEC.md "Self-managed cluster creation rules" 1–7 and its Errors table) through real HTTP
 * requests on a real database, with the real AWS SDK v3 talking to a local STS/ECR server that checks signatures:
 * one success whose cluster, default ECR registry, platform configuration and operator enrollment are all visible
 * afterwards, and every error case with its status, each leaving nothing written (and, before the AWS step, nothing
 * asked of AWS). Internal failures are real database failures (a trigger refusing a write) inside the one transaction.
 */

const UNKNOWN_ID = '0190f0b2-6c5e-7000-8000-000000000000';
const ACCOUNT = '123456789012';
const REGION = 'eu-west-3';

const aws = await startTestAwsServer();
afterAll(() => aws.close());

/** Every log line of the apps under test, to prove that no secret reaches the log. */
const logLines: string[] = [];
const logStream = new Writable({
  write(chunk: Buffer, _encoding, done) {
    logLines.push(chunk.toString('utf8'));
    done();
  },
});
/** The secret access keys the suites stored. */
const storedSecrets: string[] = [];

/** A configuration of a published AWS template, valid for a customer-managed cluster. */
const VALID_CONFIGURATION = {
  templateKey: 'aws-eks-baseline',
  templateVersion: '2.0.0',
  layerSelections: { observability: false, autoscaling: false },
  managedConfig: { 'cert-manager': { acme_email: 'ops@example.com' } },
  customerProvidedInputs: { vpc: { vpc_id: 'vpc-0123abcd' } },
};

interface Counts {
  clusters: number;
  registries: number;
  configurations: number;
  enrollments: number;
}

async function countsOf(ctx: TestApp, organizationId: string): Promise<Counts> {
  const { db } = ctx.database;
  const count = async (query: Promise<{ n: number | string | bigint } | undefined>) => Number((await query)?.n ?? 0);
  return {
    clusters: await count(db.selectFrom('clusters').select(db.fn.countAll().as('n')).where('organization_id', '=', organizationId).executeTakeFirst()),
    registries: await count(
      db.selectFrom('container_registries').select(db.fn.countAll().as('n')).where('organization_id', '=', organizationId).executeTakeFirst(),
    ),
    configurations: await count(
      db.selectFrom('cluster_platform_configurations').select(db.fn.countAll().as('n')).where('organization_id', '=', organizationId).executeTakeFirst(),
    ),
    enrollments: await count(
      db
        .selectFrom('cluster_operator_enrollments')
        .innerJoin('clusters', 'clusters.id', 'cluster_operator_enrollments.cluster_id')
        .select(db.fn.countAll().as('n'))
        .where('clusters.organization_id', '=', organizationId)
        .executeTakeFirst(),
    ),
  };
}

/** Makes every insert into `table` fail inside the database, as a broken disk or constraint would. */
async function failInsertsInto(ctx: TestApp, table: string): Promise<() => Promise<void>> {
  const { db } = ctx.database;
  const trigger = sql.id(`fail_${table}`);
  if (ctx.dialect === 'sqlite') {
    await sql`create trigger ${trigger} before insert on ${sql.table(table)} begin select raise(abort, 'simulated write failure'); end`.execute(db);
  } else {
    await sql`create or replace function slipway_test_fail_insert() returns trigger as $$ begin raise exception 'simulated write failure'; end $$ language plpgsql`.execute(db);
    await sql`create trigger ${trigger} before insert on ${sql.table(table)} for each row execute function slipway_test_fail_insert()`.execute(db);
  }
  return async () => {
    await (ctx.dialect === 'sqlite' ? sql`drop trigger ${trigger}` : sql`drop trigger ${trigger} on ${sql.table(table)}`).execute(db);
  };
}

describeEachDatabase(
  'self-managed clusters',
  (ctx) => {
    let owner: TestUser;
    let organizationId: string;
    let credentialsId: string;
    let credentialsName: string;
    let accessKeyId: string;

    const url = (org: string) => `/v1/organization/${org}/selfManagedCluster`;
    const create = (payload: unknown, auth = owner.auth, org = organizationId) => ctx().call(auth, { method: 'POST', url: url(org), payload: payload as object });
    const callsOf = (key: string) => aws.calls.filter((call) => call.accessKeyId === key).map(({ service, action, region, answered }) => ({ service, action, region, answered }));

    function body(overrides: Record<string, unknown> = {}, credentials: Record<string, unknown> = {}) {
      return {
        name: uniqueName('self-managed'),
        description: 'runs the Slipway operator',
        region: REGION,
        cloud_provider: 'AWS',
        cloud_provider_credentials: { cloud_provider: 'AWS', credentials: { id: credentialsId, name: credentialsName }, region: REGION, ...credentials },
        production: true,
        platform_configuration: VALID_CONFIGURATION,
        ...overrides,
      };
    }

    async function createAwsCredential(org: string, auth: string, keys: { accessKeyId: string; secretAccessKey: string }) {
      storedSecrets.push(keys.secretAccessKey);
      const response = await ctx().call(auth, {
        method: 'POST',
        url: `/organization/${org}/aws/credentials`,
        payload: { type: 'AWS_STATIC', name: uniqueName('aws'), access_key_id: keys.accessKeyId, secret_access_key: keys.secretAccessKey },
      });
      expect(response.statusCode, response.body).toBe(201);
      return response.json<{ id: string; name: string }>();
    }

    /** Runs a refused creation and checks that nothing was written. */
    async function expectRefused(payload: unknown, status: number, options: { auth?: string; org?: string } = {}) {
      const org = options.org ?? organizationId;
      const before = await countsOf(ctx(), org);
      const response = await create(payload, options.auth ?? owner.auth, org);
      const error = expectErrorBody(response, status);
      expect(await countsOf(ctx(), org)).toEqual(before);
      return error;
    }

    beforeAll(async () => {
      ({ owner, organizationId } = await ctx().signUpWithOrganization());
      const plan = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/changePlan`, payload: { plan: 'STARTUP' } });
      expect(plan.statusCode, plan.body).toBe(200);
      const keys = aws.addKey(ACCOUNT);
      accessKeyId = keys.accessKeyId;
      ({ id: credentialsId, name: credentialsName } = await createAwsCredential(organizationId, owner.auth, keys));
    });

    it('creates the cluster after the AWS checks, and its cluster, registry, configuration and enrollment are visible (201)', async () => {
      aws.setRules([]);
      const payload = body();
      const response = await create(payload);
      expect(response.statusCode, response.body).toBe(201);
      expect(response.headers['cache-control']).toBe('no-store');
      const created = response.json<{
        id: string;
        default_container_registry: { id: string; url: string };
        operator_bootstrap: { cluster_id: string; values: { enrollmentToken: string; clusterId: string }; helm_command: string };
      }>();
      expect(created).toMatchObject({
        organization: { id: organizationId },
        name: payload.name,
        description: 'runs the Slipway operator',
        region: REGION,
        cloud_provider: 'AWS',
        kubernetes: 'SELF_MANAGED',
        production: true,
        deployment_status: 'NEVER_DEPLOYED',
        credentials: { id: credentialsId, name: credentialsName },
        dns_provider: 'PLATFORM_DNS',
        build_provider: 'CLUSTER',
        default_container_registry: { url: `https://${ACCOUNT}.dkr.ecr.${REGION}.amazonaws.com` },
      });
      expect(created.operator_bootstrap.cluster_id).toBe(created.id);
      expect(created.operator_bootstrap.values.clusterId).toBe(created.id);
      expect(created.operator_bootstrap.helm_command).toContain(created.operator_bootstrap.values.enrollmentToken);

      // Rule 4–5: the caller's identity, then ECR in us-east-1 and in the cluster region, signed with the stored secret.
      expect(callsOf(accessKeyId)).toEqual([
        { service: 'sts', action: 'GetCallerIdentity', region: 'us-east-1', answered: 'ok' },
        { service: 'ecr', action: 'DescribeRepositories', region: 'us-east-1', answered: 'ok' },
        { service: 'ecr', action: 'DescribeRepositories', region: REGION, answered: 'ok' },
      ]);

      const clusters = await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/cluster` });
      expect(clusters.json<{ results: { id: string; kubernetes: string }[] }>().results).toContainEqual(
        expect.objectContaining({ id: created.id, kubernetes: 'SELF_MANAGED' }),
      );
      const registries = await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/containerRegistry` });
      expect(registries.statusCode, registries.body).toBe(200);
      expect(registries.json<{ results: { id: string; kind: string; url: string }[] }>().results).toContainEqual(
        expect.objectContaining({ id: created.default_container_registry.id, kind: 'ECR', url: `https://${ACCOUNT}.dkr.ecr.${REGION}.amazonaws.com` }),
      );
      const configuration = await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/cluster/${created.id}/platformConfiguration` });
      expect(configuration.statusCode, configuration.body).toBe(200);
      expect(configuration.json()).toMatchObject({ templateKey: 'aws-eks-baseline', templateVersion: '2.0.0' });
      const row = await ctx().database.db.selectFrom('clusters').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ credentials_id: credentialsId, dns_provider: 'PLATFORM_DNS', build_provider: 'CLUSTER' });

      // The enrollment is real: the operator trades the token once.
      const enroll = () => ctx().call(undefined, { method: 'POST', url: '/operator/v1/enroll', payload: { enrollment_token: created.operator_bootstrap.values.enrollmentToken } });
      const enrolled = await enroll();
      expect(enrolled.statusCode, enrolled.body).toBe(200);
      expect(enrolled.json()).toMatchObject({ cluster_id: created.id });
      expectErrorBody(await enroll(), 401);

      // A credential a cluster runs on is not deleted.
      expectErrorBody(await ctx().call(owner.auth, { method: 'DELETE', url: `/organization/${organizationId}/aws/credentials/${credentialsId}` }), 409);
    });

    it('answers 409 for a name taken in the organization (any case), and exactly one of two racing creates wins', async () => {
      aws.setRules([]);
      const name = uniqueName('Taken');
      expect((await create(body({ name }))).statusCode).toBe(201);
      const error = await expectRefused(body({ name: ` ${name.toUpperCase()} ` }), 409);
      expect(error.message).toContain('already');
      const raced = uniqueName('raced');
      const answers = await Promise.all([create(body({ name: raced })), create(body({ name: raced }))]);
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 409]);
    });

    it('answers 400 for an invalid body, without asking AWS', async () => {
      aws.setRules([]);
      const callsBefore = aws.calls.length;
      const { platform_configuration: _omitted, ...withoutConfiguration } = body();
      await expectRefused(withoutConfiguration, 400);
      await expectRefused({ ...body(), unknown_field: true }, 400);
      await expectRefused(body({ production: 'yes' }), 400);
      await expectRefused(body({}, { credentials: { id: 'not-a-uuid' } }), 400);
      await expectRefused([body()], 400);
      expect(aws.calls.length).toBe(callsBefore);
    });

    it('answers 400 for an invalid name, a provider other than AWS, an unknown region, or a credential of another provider', async () => {
      aws.setRules([]);
      const callsBefore = aws.calls.length;
      await expectRefused(body({ name: '   ' }), 400);
      await expectRefused(body({ name: 'bad\u0001name' }), 400);
      await expectRefused(body({ name: 'x'.repeat(256) }), 400);
      expect((await expectRefused(body({ cloud_provider: 'GCP' }), 400)).message).toContain('AWS');
      expect((await expectRefused(body({}, { cloud_provider: 'SCW' }), 400)).message).toContain('AWS');
      expect((await expectRefused(body({ region: 'mars-central-1' }, { region: 'mars-central-1' }), 400)).message).toContain('mars-central-1');
      await expectRefused(body({}, { region: 'us-west-2' }), 400);
      const onPremise = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/onPremise/credentials`, payload: { name: uniqueName('op') } });
      const other = await expectRefused(body({}, { credentials: { id: onPremise.json<{ id: string }>().id } }), 400);
      expect(other.message).toContain('ON_PREMISE');
      expect(aws.calls.length).toBe(callsBefore);
    });

    it('answers 400 when AWS refuses the credential: STS, ECR in us-east-1, or ECR in the cluster region only', async () => {
      aws.setRules([{ service: 'ecr', region: REGION, behaviour: { kind: 'refuse', code: 'AccessDeniedException' } }]);
      const inRegion = await expectRefused(body(), 400);
      expect(inRegion.message).toContain(`ECR DescribeRepositories in ${REGION}`);
      expect(inRegion.message).toContain('AccessDeniedException');

      aws.setRules([{ service: 'ecr', region: 'us-east-1', behaviour: { kind: 'refuse', code: 'AccessDeniedException' } }]);
      const mark = aws.calls.length;
      expect((await expectRefused(body(), 400)).message).toContain('ECR DescribeRepositories in us-east-1');
      // Refused in us-east-1: the cluster region is not asked.
      expect(aws.calls.slice(mark).map((call) => `${call.service}:${call.region}`)).toEqual(['sts:us-east-1', 'ecr:us-east-1']);

      aws.setRules([{ service: 'ecr', behaviour: { kind: 'refuse', code: 'UnrecognizedClientException' } }]);
      expect((await expectRefused(body(), 400)).message).toContain('UnrecognizedClientException');
      aws.setRules([{ service: 'sts', behaviour: { kind: 'refuse', code: 'AccessDenied' } }]);
      expect((await expectRefused(body(), 400)).message).toContain('STS GetCallerIdentity');

      // Keys AWS does not know, and a known key with a wrong secret: refused by the endpoint's own checks.
      aws.setRules([]);
      const unknown = await createAwsCredential(organizationId, owner.auth, { accessKeyId: 'AKIAUNKNOWNKEY000000', secretAccessKey: 'whatever' });
      expect((await expectRefused(body({}, { credentials: { id: unknown.id } }), 400)).message).toContain('InvalidClientTokenId');
      const wrongSecret = await createAwsCredential(organizationId, owner.auth, { accessKeyId, secretAccessKey: 'not-the-secret' });
      expect((await expectRefused(body({}, { credentials: { id: wrongSecret.id } }), 400)).message).toContain('SignatureDoesNotMatch');
      // A role credential is assumed with Slipway's own AWS identity, which this installation does not have.
      const role = await ctx().call(owner.auth, {
        method: 'POST',
        url: `/organization/${organizationId}/aws/credentials`,
        payload: { type: 'AWS_ROLE', name: uniqueName('role'), role_arn: `arn:aws:iam::${ACCOUNT}:role/slipway` },
      });
      expect(role.statusCode, role.body).toBe(201);
      await expectRefused(body({}, { credentials: { id: role.json<{ id: string }>().id } }), 400);
    });

    it('answers 400 for an invalid platform configuration and 404 for a template release that does not exist', async () => {
      aws.setRules([]);
      const invalid = await expectRefused(
        body({ platform_configuration: { ...VALID_CONFIGURATION, customerProvidedInputs: { vpc: { vpc_id: 'not-a-vpc' } } } }),
        400,
      );
      expect(invalid.message).toBe('invalid platform configuration');
      await expectRefused(body({ platform_configuration: { templateKey: 'aws-eks-baseline', templateVersion: '9.9.9' } }), 404);
    });

    it("answers 404 for an unknown credential, another organization's credential, and an organization of no one", async () => {
      aws.setRules([]);
      const callsBefore = aws.calls.length;
      await expectRefused(body({}, { credentials: { id: UNKNOWN_ID } }), 404);
      const stranger = await ctx().signUpWithOrganization();
      await ctx().call(stranger.owner.auth, { method: 'POST', url: `/organization/${stranger.organizationId}/changePlan`, payload: { plan: 'STARTUP' } });
      const theirs = await createAwsCredential(stranger.organizationId, stranger.owner.auth, aws.addKey('999999999999'));
      await expectRefused(body({}, { credentials: { id: theirs.id } }), 404);
      // Nor can they use ours from their organization.
      await expectRefused(body(), 404, { auth: stranger.owner.auth, org: stranger.organizationId });
      await expectRefused(body(), 404, { org: UNKNOWN_ID });
      expect(aws.calls.length).toBe(callsBefore);
    });

    it('answers 403 when the plan excludes self-managed clusters, and for a member without the permission', async () => {
      aws.setRules([]);
      const callsBefore = aws.calls.length;
      const community = await ctx().signUpWithOrganization();
      const theirs = await createAwsCredential(community.organizationId, community.owner.auth, aws.addKey('888888888888'));
      const refused = await expectRefused(body({}, { credentials: { id: theirs.id } }), 403, { auth: community.owner.auth, org: community.organizationId });
      expect(refused.message).toContain('plan');
      const viewer = await ctx().signUp();
      await ctx().addMemberDirectly(organizationId, viewer, 'VIEWER');
      await expectRefused(body(), 403, { auth: viewer.auth });
      expect(aws.calls.length).toBe(callsBefore);
    });

    it('answers 503 when AWS keeps throttling (after a bounded number of retries) or cannot be reached', async () => {
      aws.setRules([{ service: 'sts', behaviour: { kind: 'throttle' } }]);
      const mark = aws.calls.length;
      expect((await expectRefused(body(), 503)).message).toContain('throttling');
      expect(aws.calls.slice(mark).map((call) => call.action)).toEqual(['GetCallerIdentity', 'GetCallerIdentity', 'GetCallerIdentity']);

      aws.setRules([{ service: 'ecr', region: REGION, behaviour: { kind: 'throttle' } }]);
      await expectRefused(body(), 503);
      aws.setRules([{ behaviour: { kind: 'drop' } }]);
      expect((await expectRefused(body(), 503)).message).toContain('could not be reached');
      aws.setRules([]);
    });

    it('answers 503 when the remote template catalog is temporarily unavailable', async () => {
      const catalog = createServer((_request, response) => {
        response.writeHead(503);
        response.end();
      });
      await new Promise<void>((resolve) => catalog.listen(0, '127.0.0.1', resolve));
      const app = await buildApp({
        config: {
          oidc: { issuer: ctx().issuer.issuer, audience: ctx().issuer.audience },
          egressIps: [],
          logLevel: 'silent',
          awsEndpointUrl: aws.url,
          templateCatalogUrl: `http://127.0.0.1:${(catalog.address() as AddressInfo).port}/catalog.json`,
        },
        database: ctx().database,
        clock: ctx().clock,
        jobs: { run: false },
      });
      try {
        aws.setRules([]);
        // Secrets are sealed with each app's own key (tests give every app a fresh one): a credential of this app.
        const keys = aws.addKey(ACCOUNT);
        const credential = await app.inject({
          method: 'POST',
          url: `/organization/${organizationId}/aws/credentials`,
          headers: { authorization: owner.auth },
          payload: { type: 'AWS_STATIC', name: uniqueName('aws'), access_key_id: keys.accessKeyId, secret_access_key: keys.secretAccessKey },
        });
        expect(credential.statusCode, credential.body).toBe(201);
        const before = await countsOf(ctx(), organizationId);
        const response = await app.inject({
          method: 'POST',
          url: url(organizationId),
          headers: { authorization: owner.auth },
          payload: body({}, { credentials: { id: credential.json<{ id: string }>().id } }),
        });
        expectErrorBody(response, 503);
        expect(await countsOf(ctx(), organizationId)).toEqual(before);
      } finally {
        await app.close();
        await new Promise<void>((resolve) => catalog.close(() => resolve()));
      }
    });

    it('answers 500 when a creation step fails inside the transaction, and leaves no cluster, registry, configuration or enrollment', async () => {
      aws.setRules([]);
      for (const table of ['cluster_operator_enrollments', 'cluster_platform_configurations', 'container_registries']) {
        const restore = await failInsertsInto(ctx(), table);
        try {
          const name = uniqueName('doomed');
          const error = await expectRefused(body({ name }), 500);
          expect(error.message).not.toContain('simulated');
          const leftovers = await ctx().database.db.selectFrom('clusters').select('id').where('organization_id', '=', organizationId).where('name', '=', name).execute();
          expect(leftovers).toEqual([]);
        } finally {
          await restore();
        }
      }
      // The same request succeeds once the database accepts the writes again.
      expect((await create(body())).statusCode).toBe(201);
    });

    it('never writes a stored secret or an enrollment token to the log', async () => {
      const created = await create(body());
      expect(created.statusCode).toBe(201);
      const token = created.json<{ operator_bootstrap: { values: { enrollmentToken: string } } }>().operator_bootstrap.values.enrollmentToken;
      const log = logLines.join('');
      // The log is on (info): it holds the requests, including the failed ones above.
      expect(log).toContain('selfManagedCluster');
      expect(storedSecrets.length).toBeGreaterThan(3);
      for (const secret of [...storedSecrets, token]) expect(log).not.toContain(secret);
    });
  },
  { awsEndpointUrl: aws.url, logStream },
);
