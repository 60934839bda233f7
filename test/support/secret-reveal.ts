import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { expectErrorBody } from './error-body.ts';
import { uniqueName, type TestApp, type TestUser } from './test-app.ts';

/**
 * What the `secrets:reveal` tests share (docs/roles.md, "Revealing secret values"): an environment holding a
 * PostgreSQL database (whose generated password is a hidden built-in) and an application beside it, the four routes
 * that answer masked values unless asked `?reveal=true`, and the checks of a revealing, a masked and a refused answer.
 */
export interface RevealFixture {
  environmentId: string;
  applicationId: string;
  /** `PLATFORM_DATABASE_<NAME>_PASSWORD` of the fixture's database. */
  passwordKey: string;
}

/**
 * Creates the fixture in `projectId`, its environment of type `mode` on `clusterId` (by default the organization's only
 * cluster).
 */
export async function createRevealFixture(
  testApp: TestApp,
  ownerAuth: string,
  projectId: string,
  options: { mode?: string; clusterId?: string } = {},
): Promise<RevealFixture> {
  const mode = options.mode ?? 'STAGING';
  const created = async (url: string, payload: Record<string, unknown>): Promise<string> => {
    const response = await testApp.call(ownerAuth, { method: 'POST', url, payload });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ id: string }>().id;
  };
  const environmentId = await created(`/project/${projectId}/environment`, {
    name: uniqueName(mode.toLowerCase()),
    mode,
    ...(options.clusterId === undefined ? {} : { cluster: options.clusterId }),
  });
  const databaseName = uniqueName('orders-db');
  await created(`/environment/${environmentId}/database`, { name: databaseName, type: 'POSTGRESQL', version: '16', mode: 'CONTAINER', accessibility: 'PRIVATE' });
  const applicationId = await created(`/environment/${environmentId}/application`, {
    name: uniqueName('web'),
    git_repository: { url: 'https://github.com/slipway-fixture/web.git', provider: 'GITHUB', branch: 'main' },
    healthchecks: {},
  });
  return { environmentId, applicationId, passwordKey: `PLATFORM_DATABASE_${databaseName.toUpperCase().replace(/-/g, '_')}_PASSWORD` };
}

/** A fresh organization with a cluster, a project and the fixture in it, and its owner. */
export async function createRevealWorld(testApp: TestApp): Promise<{ owner: TestUser; organizationId: string; projectId: string; fixture: RevealFixture }> {
  const { owner, organizationId } = await testApp.signUpWithOrganization();
  const cluster = await testApp.call(owner.auth, {
    method: 'POST',
    url: `/organization/${organizationId}/cluster`,
    payload: { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' },
  });
  expect(cluster.statusCode, cluster.body).toBe(201);
  const project = await testApp.call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/project`, payload: { name: uniqueName('shop') } });
  expect(project.statusCode, project.body).toBe(200);
  const projectId = project.json<{ id: string }>().id;
  return { owner, organizationId, projectId, fixture: await createRevealFixture(testApp, owner.auth, projectId) };
}

/** The routes that reveal on `?reveal=true`: the environment's and the application's listing and explanation. */
export function revealingUrls(fixture: RevealFixture): string[] {
  return [
    `/environment/${fixture.environmentId}/environmentVariable`,
    `/environment/${fixture.environmentId}/resolvedVariables`,
    `/application/${fixture.applicationId}/environmentVariable`,
    `/application/${fixture.applicationId}/resolvedVariables`,
  ];
}

function passwordEntry(response: LightMyRequestResponse, fixture: RevealFixture): { value?: string } | undefined {
  return response.json<{ results: { key: string; value?: string }[] }>().results.find((variable) => variable.key === fixture.passwordKey);
}

/** A 200 that carries the database password in plain text, not to be cached. Answers the password. */
export function expectRevealed(response: LightMyRequestResponse, fixture: RevealFixture): string {
  expect(response.statusCode, response.body).toBe(200);
  expect(response.headers['cache-control']).toBe('no-store');
  const password = passwordEntry(response, fixture)?.value;
  expect(password, `${fixture.passwordKey} in ${response.body.slice(0, 200)}`).toEqual(expect.any(String));
  expect(password?.length).toBeGreaterThanOrEqual(24);
  return password ?? '';
}

/** A 200 that lists the database password's variable without its value (and without `password`, when known). */
export function expectMasked(response: LightMyRequestResponse, fixture: RevealFixture, password?: string): void {
  expect(response.statusCode, response.body).toBe(200);
  const entry = passwordEntry(response, fixture);
  expect(entry, `${fixture.passwordKey} listed`).toBeDefined();
  expect(entry?.value).toBeUndefined();
  if (password !== undefined) expect(response.body).not.toContain(password);
}

/** The 403 of a caller without `secrets:reveal`: the error body names the permission it lacks. */
export function expectRevealRefused(response: LightMyRequestResponse, password?: string): void {
  const body = expectErrorBody(response, 403);
  expect(body.message).toContain('secrets:reveal');
  if (password !== undefined) expect(response.body).not.toContain(password);
}
