import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, vi } from 'vitest';
import { buildApp, type AppDeps } from '../../src/app.ts';
import type { FastifyTypeBox } from '../../src/http/fastify.types.ts';
import type { Clock } from '../../src/lib/clock.ts';
import type { Database } from '../../src/db/db.client.ts';
import { createLocalClusterGrants } from '../../src/modules/clusters/clusters.local-grants.ts';
import { openTestDatabase, TEST_DIALECTS, type TestDatabase, type TestDialect } from './databases.ts';
import { startTestIssuer, type TestIssuer } from './oidc-issuer.ts';
import { checkAnswerAgainstReference } from './reference-contract.ts';

/**
 * The real application on a real database, for route tests through `app.inject`, with a real OIDC issuer on
 * loopback to sign users in. `describeEachDatabase` runs a suite once per test dialect.
 */
export class TestClock implements Clock {
  private offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

export interface TestUser {
  id: string;
  email: string;
  /** A JWT of the test issuer for this user. */
  jwt: string;
  /** `Authorization` header value. */
  auth: string;
}

export interface TestApp {
  dialect: TestDialect;
  app: FastifyTypeBox;
  database: Database;
  issuer: TestIssuer;
  clock: TestClock;
  /** Signs a new person in (their user row is created by their first request) and returns them. */
  signUp(name?: string): Promise<TestUser>;
  /**
   * `app.inject` with `auth` as the Authorization header value ("Bearer …"); the answer is checked against the
   * reference's schema for its operation and status (reference-contract.ts), failing the test on a mismatch.
   */
  call(auth: string | undefined, options: InjectOptions): Promise<LightMyRequestResponse>;
  /** Creates an organization owned by `owner` and answers its id. */
  createOrganization(owner: TestUser, name?: string): Promise<string>;
  /** Waits until the purge job deleted a deleted organization's row (organizations.purge.ts). */
  organizationPurged(organizationId: string): Promise<void>;
  /** A newly signed-up person and an organization they own. */
  signUpWithOrganization(name?: string): Promise<{ owner: TestUser; organizationId: string }>;
  /** Makes `user` a member with a built-in role by writing the row, for fixtures that are not about joining. */
  addMemberDirectly(organizationId: string, user: TestUser, roleName: string): Promise<void>;
  /** Creates an API token in the organization as `creator`, answering its value. */
  createApiToken(creatorAuth: string, organizationId: string, body: Record<string, unknown>): Promise<string>;
  /**
   * Gives the organization the installation operator's grant for LOCAL clusters, as `slipway admin local-clusters
   * allow` does: for suites that create or deploy onto LOCAL clusters without being about that grant. Organizations
   * have none otherwise.
   */
  allowLocalClusters(organizationId: string): Promise<void>;
  close(): Promise<void>;
}

let counter = 0;
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}`;
}

export interface TestAppOptions {
  egressIps?: string[];
  logStream?: NodeJS.WritableStream;
  /** SLIPWAY_AWS_ENDPOINT_URL of the app: a test AWS server (support/aws-server.ts). */
  awsEndpointUrl?: string;
  /** How often a deleted organization's purge looks again (fast by default here) and how long it waits at most. */
  organizationPurge?: AppDeps['organizationPurge'];
  /** The in-process job worker's timings (fast by default here), or `run: false` for a test that drives jobs itself. */
  jobs?: AppDeps['jobs'];
  clusterOperator?: AppDeps['clusterOperator'];
  agents?: AppDeps['agents'];
  /** SLIPWAY_DNS_SERVERS / SLIPWAY_APPS_DOMAIN of the app: custom domain checks against a test DNS server. */
  dnsServers?: string[];
  appsDomain?: string;
  /** SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS of the app: git sources on the test git server (http://127.0.0.1). */
  gitAllowPrivateHosts?: boolean;
  customDomains?: AppDeps['customDomains'];
  webhooks?: AppDeps['webhooks'];
  /** SLIPWAY_HELM_BINARY of the app: the helm the control plane reads charts with (createHelmDefaultValues). */
  helmBinary?: string;
  /** SLIPWAY_METRICS_TOKEN of the app: `GET /metrics` is served to its holder (none without it). */
  metricsToken?: string;
}

export async function startTestApp(dialect: TestDialect, options: TestAppOptions = {}): Promise<TestApp> {
  const testDatabase: TestDatabase = await openTestDatabase(dialect);
  const issuer = await startTestIssuer();
  const clock = new TestClock();
  const app = await buildApp({
    config: {
      oidc: { issuer: issuer.issuer, audience: issuer.audience },
      egressIps: options.egressIps ?? [],
      logLevel: options.logStream === undefined ? 'silent' : 'info',
      ...(options.awsEndpointUrl === undefined ? {} : { awsEndpointUrl: options.awsEndpointUrl }),
      ...(options.dnsServers === undefined ? {} : { dnsServers: options.dnsServers }),
      ...(options.appsDomain === undefined ? {} : { appsDomain: options.appsDomain }),
      ...(options.gitAllowPrivateHosts === undefined ? {} : { gitAllowPrivateHosts: options.gitAllowPrivateHosts }),
      ...(options.helmBinary === undefined ? {} : { helmBinary: options.helmBinary }),
      ...(options.metricsToken === undefined ? {} : { metricsToken: options.metricsToken }),
    },
    database: testDatabase.database,
    clock,
    jobs: { pollIntervalMs: 50, retryBaseMs: 50, ...options.jobs },
    ...(options.clusterOperator === undefined ? {} : { clusterOperator: options.clusterOperator }),
    ...(options.agents === undefined ? {} : { agents: options.agents }),
    ...(options.customDomains === undefined ? {} : { customDomains: options.customDomains }),
    ...(options.webhooks === undefined ? {} : { webhooks: options.webhooks }),
    organizationPurge: { recheckMs: 50, ...options.organizationPurge },
    ...(options.logStream === undefined ? {} : { logStream: options.logStream }),
  });

  async function call(auth: string | undefined, request: InjectOptions): Promise<LightMyRequestResponse> {
    const headers = { ...(request.headers ?? {}), ...(auth === undefined ? {} : { authorization: auth }) };
    const response = await app.inject({ ...request, headers });
    // The suite is the contract test: an answer that does not fit the reference's schema fails the test receiving it.
    checkAnswerAgainstReference(response);
    return response;
  }

  const testApp: TestApp = {
    dialect,
    app,
    database: testDatabase.database,
    issuer,
    clock,
    call,
    async signUp(name = uniqueName('user')) {
      const email = `${name}@example.com`;
      const jwt = await issuer.signToken({ sub: `sub-${name}`, email, email_verified: true, name });
      const auth = `Bearer ${jwt}`;
      const response = await call(auth, { method: 'GET', url: '/organization' });
      if (response.statusCode !== 200) throw new Error(`sign-up failed: ${response.statusCode} ${response.body}`);
      const row = await testDatabase.database.db
        .selectFrom('users')
        .select('id')
        .where('subject', '=', `sub-${name}`)
        .executeTakeFirstOrThrow();
      return { id: row.id, email, jwt, auth };
    },
    async createOrganization(owner, name = uniqueName('org')) {
      const response = await call(owner.auth, { method: 'POST', url: '/organization', payload: { name } });
      if (response.statusCode !== 201) throw new Error(`createOrganization failed: ${response.statusCode} ${response.body}`);
      return response.json<{ id: string }>().id;
    },
    async organizationPurged(organizationId) {
      const row = () => testDatabase.database.db.selectFrom('organizations').select('id').where('id', '=', organizationId).executeTakeFirst();
      await vi.waitFor(async () => expect(await row()).toBeUndefined(), { timeout: 10_000, interval: 20 });
    },
    async signUpWithOrganization(name) {
      const owner = await testApp.signUp(name);
      return { owner, organizationId: await testApp.createOrganization(owner) };
    },
    async addMemberDirectly(organizationId, user, roleName) {
      const { db } = testDatabase.database;
      const role = await db
        .selectFrom('roles')
        .select('id')
        .where('organization_id', '=', organizationId)
        .where('name', '=', roleName)
        .executeTakeFirstOrThrow();
      const now = new Date().toISOString();
      await db
        .insertInto('members')
        .values({ organization_id: organizationId, user_id: user.id, role_id: role.id, created_at: now, updated_at: now })
        .execute();
    },
    async createApiToken(creatorAuth, organizationId, body) {
      const response = await call(creatorAuth, { method: 'POST', url: `/organization/${organizationId}/apiToken`, payload: body });
      if (response.statusCode !== 201) throw new Error(`createApiToken failed: ${response.statusCode} ${response.body}`);
      return response.json<{ token: string }>().token;
    },
    async allowLocalClusters(organizationId) {
      await createLocalClusterGrants({ db: testDatabase.database.db, clock }).allow(organizationId, 'test support');
    },
    async close() {
      await app.close();
      await issuer.close();
      await testDatabase.dispose();
    },
  };
  return testApp;
}

/** Runs `suite` once per test dialect, each with its own app and database, started before and closed after. */
export function describeEachDatabase(title: string, suite: (context: () => TestApp) => void, options: TestAppOptions = {}): void {
  for (const dialect of TEST_DIALECTS) {
    describe(`${title} [${dialect}]`, () => {
      let testApp: TestApp | undefined;
      beforeAll(async () => {
        testApp = await startTestApp(dialect, options);
      });
      afterAll(async () => {
        await testApp?.close();
      });
      suite(() => {
        if (testApp === undefined) throw new Error('test app not started');
        return testApp;
      });
    });
  }
}
