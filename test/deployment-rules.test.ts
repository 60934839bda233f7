import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { Requester } from '../src/auth/principal.ts';
import { AppError } from '../src/lib/errors.ts';
import { latestScheduledAction, timeOfDayFrom, wildcardMatches, WEEKDAYS, type Weekday } from '../src/modules/deployment-rules/deployment-rules.calendar.ts';
import { createDeploymentRulesService } from '../src/modules/deployment-rules/deployment-rules.service.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * Deployment rules (issue 24, part 3): the calendar (times, wildcards, the latest due start or stop in a time zone),
 * then the reference's eight operations on both databases — a project's rules placing new environments, each
 * environment's own rule — and the schedule stopping and deploying environments again as the clock moves.
 */

const MINUTE = 60_000;
const ALL_DAYS = [...WEEKDAYS];

describe('deployment rule calendar', () => {
  it('reads times of day as HH:MM or as the time of a date-time, minute-precise', () => {
    expect(timeOfDayFrom('08:30', '/t')).toBe('08:30');
    expect(timeOfDayFrom('1970-01-01T19:00:00.000Z', '/t')).toBe('19:00');
    expect(timeOfDayFrom('2024-05-02T07:05:00+02:00', '/t')).toBe('07:05');
    for (const bad of ['25:00', '12:60', '7:00', 'noon', '', '12:00:30', '2024-05-02T24:00:00Z']) {
      expect(() => timeOfDayFrom(bad, '/t'), bad).toThrow(AppError);
    }
  });

  it('matches wildcards case-insensitively; the empty wildcard matches everything', () => {
    expect(wildcardMatches('', 'anything')).toBe(true);
    expect(wildcardMatches('pr-*', 'PR-42')).toBe(true);
    expect(wildcardMatches('*-preview', 'feature-x-preview')).toBe(true);
    expect(wildcardMatches('a*b*c', 'axxbyyc')).toBe(true);
    expect(wildcardMatches('pr-*', 'main')).toBe(false);
    expect(wildcardMatches('pr.', 'prx')).toBe(false);
    expect(wildcardMatches('*a*a*a*a*a*a*a*b', 'a'.repeat(200))).toBe(false);
  });

  it('finds the latest start or stop in the schedule time zone, on listed weekdays only', () => {
    // Thursday 26 November 2026, 18:30 UTC = 19:30 in Paris (CET, UTC+1).
    const now = new Date('2026-11-26T18:30:00Z');
    const after = new Date('2026-11-26T17:30:00Z');
    const paris = { timezone: 'Europe/Paris', startTime: '08:00', stopTime: '19:00', weekdays: ['THURSDAY'] as Weekday[] };
    expect(latestScheduledAction(paris, after, now)).toEqual({ action: 'stop', at: new Date('2026-11-26T18:00:00Z') });
    // 19:00 UTC has not come yet.
    expect(latestScheduledAction({ ...paris, timezone: 'UTC' }, after, now)).toBeUndefined();
    expect(latestScheduledAction({ ...paris, weekdays: ['FRIDAY', 'SATURDAY'] }, after, now)).toBeUndefined();
    // Slept through Thursday's stop and Friday's start: only the start counts.
    const friday = new Date('2026-11-27T09:00:00Z');
    expect(latestScheduledAction({ ...paris, weekdays: ['THURSDAY', 'FRIDAY'] }, after, friday)).toEqual({ action: 'start', at: new Date('2026-11-27T07:00:00Z') });
    expect(latestScheduledAction({ ...paris, weekdays: [] }, after, now)).toBeUndefined();
  });
});

interface ProjectRuleView {
  id: string;
  name: string;
  description: string | null;
  mode: string;
  cluster_id: string;
  auto_stop: boolean;
  timezone: string;
  start_time: string;
  stop_time: string;
  weekdays: string[];
  wildcard: string;
  priority_index: number;
}

interface EnvironmentRuleView {
  id: string;
  auto_stop: boolean;
  on_demand_preview: boolean;
  auto_preview: boolean;
  timezone: string;
  start_time: string;
  stop_time: string;
  weekdays: string[];
}

/** The wall-clock `HH:MM` and weekday of an instant in a time zone. */
function wallClock(at: Date, timezone: string): { time: string; weekday: Weekday } {
  const time = new Intl.DateTimeFormat('en-GB', { timeZone: timezone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(at);
  const weekday = new Intl.DateTimeFormat('en-US', { timeZone: timezone, weekday: 'long' }).format(at).toUpperCase() as Weekday;
  return { time, weekday };
}

describeEachDatabase('deployment rules', (ctx) => {
  let owner: TestUser;
  let organizationId: string;
  let projectId: string;
  let clusterId: string;
  let secondClusterId: string;

  async function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, auth = owner.auth) {
    return ctx().call(auth, { method, url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  }

  async function ok<T>(method: 'GET' | 'POST' | 'PUT', url: string, payload: unknown, status: number): Promise<T> {
    const response = await call(method, url, payload);
    expect(response.statusCode, response.body).toBe(status);
    return response.json<T>();
  }

  async function createCluster(orgId: string, auth = owner.auth): Promise<string> {
    const response = await call('POST', `/organization/${orgId}/cluster`, { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' }, auth);
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ id: string }>().id;
  }

  async function createProject(orgId: string, auth = owner.auth): Promise<string> {
    const response = await call('POST', `/organization/${orgId}/project`, { name: uniqueName('project') }, auth);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ id: string }>().id;
  }

  function ruleBody(overrides: Record<string, unknown> = {}) {
    return {
      name: uniqueName('rule'),
      description: 'office hours',
      mode: 'DEVELOPMENT',
      cluster_id: clusterId,
      auto_stop: false,
      timezone: 'UTC',
      start_time: '08:00',
      stop_time: '19:00',
      weekdays: ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY'],
      wildcard: '',
      ...overrides,
    };
  }

  async function createEnvironment(project: string, body: Record<string, unknown>) {
    return ok<{ id: string; name: string; mode: string; cluster_id: string }>('POST', `/project/${project}/environment`, body, 201);
  }

  /** Puts an environment in a state as its cluster's agent would have left it. */
  async function setState(environmentId: string, status: 'DEPLOYED' | 'STOPPED') {
    await ctx().database.db.updateTable('environments').set({ status, deployed_revision: 1 }).where('id', '=', environmentId).execute();
  }

  const stateOf = async (environmentId: string) =>
    (await ctx().database.db.selectFrom('environments').select('status').where('id', '=', environmentId).executeTakeFirstOrThrow()).status;
  const actionsOf = async (environmentId: string) =>
    (await ctx().database.db.selectFrom('environment_deployments').select(['action', 'triggered_by']).where('environment_id', '=', environmentId).orderBy('created_at').execute()).map(
      (row) => row.action,
    );
  const sweepsDone = async () =>
    (await ctx().database.db.selectFrom('jobs').select('id').where('kind', '=', 'schedule.deployment-rules').where('status', '=', 'SUCCEEDED').execute()).length;

  /** Moves the test clock past `at` and waits for a sweep that began after it. */
  async function advancePast(at: Date) {
    const before = await sweepsDone();
    ctx().clock.advance(Math.max(0, at.getTime() - ctx().clock.now().getTime()) + 30_000);
    await vi.waitFor(async () => expect(await sweepsDone()).toBeGreaterThan(before), { timeout: 10_000, interval: 50 });
  }

  /** A whole minute at least two minutes ahead of the test clock. */
  function comingMinute(): Date {
    const now = ctx().clock.now().getTime();
    return new Date(Math.ceil(now / MINUTE) * MINUTE + 2 * MINUTE);
  }

  async function environmentRule(environmentId: string) {
    return ok<EnvironmentRuleView>('GET', `/environment/${environmentId}/deploymentRule`, undefined, 200);
  }

  async function editEnvironmentRule(environmentId: string, body: Record<string, unknown>) {
    const rule = await environmentRule(environmentId);
    return ok<EnvironmentRuleView>('PUT', `/environment/${environmentId}/deploymentRule/${rule.id}`, body, 200);
  }

  beforeAll(async () => {
    ({ owner, organizationId } = await ctx().signUpWithOrganization());
    projectId = await createProject(organizationId);
    clusterId = await createCluster(organizationId);
    secondClusterId = await createCluster(organizationId);
  });

  describe('project deployment rules', () => {
    it('creates (201), lists in priority order, gets, edits and deletes (204) rules', async () => {
      const project = await createProject(organizationId);
      const first = await ok<ProjectRuleView>('POST', `/project/${project}/deploymentRule`, ruleBody({ name: ' Office hours ', start_time: '1970-01-01T07:30:00Z', weekdays: ['FRIDAY', 'MONDAY', 'MONDAY'] }), 201);
      expect(first).toMatchObject({
        name: 'Office hours',
        description: 'office hours',
        mode: 'DEVELOPMENT',
        cluster_id: clusterId,
        auto_stop: false,
        timezone: 'UTC',
        start_time: '1970-01-01T07:30:00Z',
        stop_time: '1970-01-01T19:00:00Z',
        weekdays: ['MONDAY', 'FRIDAY'],
        wildcard: '',
        priority_index: 0,
      });
      const second = await ok<ProjectRuleView>('POST', `/project/${project}/deploymentRule`, ruleBody({ wildcard: 'pr-*', mode: 'PREVIEW' }), 201);
      expect(second.priority_index).toBe(1);
      const listed = await ok<{ results: ProjectRuleView[] }>('GET', `/project/${project}/deploymentRule`, undefined, 200);
      expect(listed.results.map((rule) => rule.id)).toEqual([first.id, second.id]);
      expect(await ok('GET', `/project/${project}/deploymentRule/${second.id}`, undefined, 200)).toEqual(second);

      const edited = await ok<ProjectRuleView>(
        'PUT',
        `/project/${project}/deploymentRule/${first.id}`,
        ruleBody({ name: 'Night shift', description: null, cluster_id: secondClusterId, auto_stop: true, timezone: 'Europe/Paris', start_time: '20:00', stop_time: '06:00' }),
        200,
      );
      expect(edited).toMatchObject({ id: first.id, name: 'Night shift', description: null, cluster_id: secondClusterId, auto_stop: true, timezone: 'Europe/Paris', priority_index: 0 });

      const removed = await call('DELETE', `/project/${project}/deploymentRule/${first.id}`);
      expect(removed.statusCode, removed.body).toBe(204);
      expect((await ok<{ results: ProjectRuleView[] }>('GET', `/project/${project}/deploymentRule`, undefined, 200)).results.map((rule) => [rule.id, rule.priority_index])).toEqual([[second.id, 0]]);
      expectErrorBody(await call('GET', `/project/${project}/deploymentRule/${first.id}`), 404);
      expectErrorBody(await call('PUT', `/project/${project}/deploymentRule/${first.id}`, ruleBody()), 404);
      expectErrorBody(await call('DELETE', `/project/${project}/deploymentRule/${first.id}`), 404);
      // A rule is addressed under its own project only.
      expectErrorBody(await call('GET', `/project/${projectId}/deploymentRule/${second.id}`), 404);
    });

    it('reorders: the body names every rule once, else 400 naming the entry', async () => {
      const project = await createProject(organizationId);
      const ids: string[] = [];
      for (let index = 0; index < 3; index += 1) ids.push((await ok<ProjectRuleView>('POST', `/project/${project}/deploymentRule`, ruleBody(), 201)).id);
      const [a, b, c] = ids as [string, string, string];
      const reordered = await call('PUT', `/project/${project}/deploymentRule/order`, { project_deployment_rule_ids_in_order: [c, a, b] });
      expect(reordered.statusCode, reordered.body).toBe(200);
      expect(reordered.body).toBe('');
      const listed = await ok<{ results: ProjectRuleView[] }>('GET', `/project/${project}/deploymentRule`, undefined, 200);
      expect(listed.results.map((rule) => [rule.id, rule.priority_index])).toEqual([
        [c, 0],
        [a, 1],
        [b, 2],
      ]);

      const unknown = expectErrorBody(await call('PUT', `/project/${project}/deploymentRule/order`, { project_deployment_rule_ids_in_order: [c, a, b, crypto.randomUUID()] }), 400);
      expect(unknown.details?.map((detail) => detail.field)).toEqual(['/project_deployment_rule_ids_in_order/3']);
      const twice = expectErrorBody(await call('PUT', `/project/${project}/deploymentRule/order`, { project_deployment_rule_ids_in_order: [c, a, a] }), 400);
      expect(twice.details?.map((detail) => detail.field)).toEqual(['/project_deployment_rule_ids_in_order/2', '/project_deployment_rule_ids_in_order']);
      expectErrorBody(await call('PUT', `/project/${project}/deploymentRule/order`, { project_deployment_rule_ids_in_order: [c, a] }), 400);
      expectErrorBody(await call('PUT', `/project/${project}/deploymentRule/order`, {}), 400);
      expectErrorBody(await call('PUT', `/project/${project}/deploymentRule/order`, { project_deployment_rule_ids_in_order: ['not-a-uuid'] }), 400);
      // A rule of another project is not one of this project's.
      const foreignRule = (await ok<ProjectRuleView>('POST', `/project/${projectId}/deploymentRule`, ruleBody({ wildcard: 'never-matches-*' }), 201)).id;
      expectErrorBody(await call('PUT', `/project/${project}/deploymentRule/order`, { project_deployment_rule_ids_in_order: [c, a, b, foreignRule] }), 400);
      expect((await ok<{ results: ProjectRuleView[] }>('GET', `/project/${project}/deploymentRule`, undefined, 200)).results.map((rule) => rule.id)).toEqual([c, a, b]);
    });

    it('refuses bad input with 400 naming the field, and nothing is written', async () => {
      const project = await createProject(organizationId);
      const stranger = await ctx().signUpWithOrganization();
      const foreignCluster = await createCluster(stranger.organizationId, stranger.owner.auth);
      const cases: Array<[Record<string, unknown>, string | undefined]> = [
        [ruleBody({ start_time: '25:00' }), '/start_time'],
        [ruleBody({ stop_time: '18:61' }), '/stop_time'],
        [ruleBody({ stop_time: '18:00:30' }), '/stop_time'],
        [ruleBody({ timezone: 'Mars/Olympus_Mons' }), '/timezone'],
        [ruleBody({ weekdays: ['FUNDAY'] }), '/weekdays/0'],
        [ruleBody({ auto_stop: true, weekdays: [] }), '/weekdays'],
        [ruleBody({ auto_stop: true, start_time: '09:00', stop_time: '1970-01-01T09:00:00Z' }), '/stop_time'],
        [ruleBody({ cluster_id: foreignCluster }), '/cluster_id'],
        [ruleBody({ mode: 'SANDBOX' }), '/mode'],
        [ruleBody({ name: '' }), '/name'],
        [ruleBody({ wildcard: 'a\nb' }), '/wildcard'],
        [ruleBody({ extra: true }), undefined],
      ];
      for (const [body, field] of cases) {
        const error = expectErrorBody(await call('POST', `/project/${project}/deploymentRule`, body), 400);
        if (field !== undefined) expect(error.details?.map((detail) => detail.field), JSON.stringify(body)).toContain(field);
      }
      const { weekdays: _weekdays, ...withoutWeekdays } = ruleBody();
      expectErrorBody(await call('POST', `/project/${project}/deploymentRule`, withoutWeekdays), 400);
      // Without auto_stop, an empty week and equal times are a schedule that never runs: allowed.
      await ok('POST', `/project/${project}/deploymentRule`, ruleBody({ weekdays: [], start_time: '09:00', stop_time: '09:00' }), 201);
      expect((await ok<{ results: unknown[] }>('GET', `/project/${project}/deploymentRule`, undefined, 200)).results).toHaveLength(1);
    });

    it('refuses a name taken in the project (409, one winner when racing)', async () => {
      const project = await createProject(organizationId);
      const name = uniqueName('Previews');
      const answers = await Promise.all([1, 2, 3].map(() => call('POST', `/project/${project}/deploymentRule`, ruleBody({ name }))));
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 409, 409]);
      for (const answer of answers.filter((item) => item.statusCode === 409)) expectErrorBody(answer, 409);
      expectErrorBody(await call('POST', `/project/${project}/deploymentRule`, ruleBody({ name: name.toUpperCase() })), 409);
      const other = await ok<ProjectRuleView>('POST', `/project/${project}/deploymentRule`, ruleBody(), 201);
      expectErrorBody(await call('PUT', `/project/${project}/deploymentRule/${other.id}`, ruleBody({ name })), 409);
      // The same name in another project is fine.
      await ok('POST', `/project/${await createProject(organizationId)}/deploymentRule`, ruleBody({ name }), 201);
    });

    it("answers 404 for another organization's project, and 404 for an unknown one", async () => {
      const stranger = await ctx().signUpWithOrganization();
      const rule = await ok<ProjectRuleView>('POST', `/project/${projectId}/deploymentRule`, ruleBody({ wildcard: 'nothing-*' }), 201);
      for (const [method, url, body] of [
        ['GET', `/project/${projectId}/deploymentRule`, undefined],
        ['POST', `/project/${projectId}/deploymentRule`, ruleBody()],
        ['GET', `/project/${projectId}/deploymentRule/${rule.id}`, undefined],
        ['PUT', `/project/${projectId}/deploymentRule/${rule.id}`, ruleBody()],
        ['DELETE', `/project/${projectId}/deploymentRule/${rule.id}`, undefined],
        ['PUT', `/project/${projectId}/deploymentRule/order`, { project_deployment_rule_ids_in_order: [rule.id] }],
      ] as const) {
        expectErrorBody(await call(method, url, body, stranger.owner.auth), 404);
      }
      expectErrorBody(await call('GET', `/project/${crypto.randomUUID()}/deploymentRule`), 404);
      expect((await ok<ProjectRuleView>('GET', `/project/${projectId}/deploymentRule/${rule.id}`, undefined, 200)).id).toBe(rule.id);
    });
  });

  describe('new environments', () => {
    it("get the first matching rule's cluster, mode and schedule; the request's own cluster and mode win", async () => {
      const project = await createProject(organizationId);
      const previews = await ok<ProjectRuleView>(
        'POST',
        `/project/${project}/deploymentRule`,
        ruleBody({ name: 'previews', wildcard: 'pr-*', mode: 'PREVIEW', cluster_id: secondClusterId, auto_stop: true, timezone: 'Europe/Paris', start_time: '07:00', stop_time: '20:30', weekdays: ['SATURDAY'] }),
        201,
      );
      const everything = await ok<ProjectRuleView>('POST', `/project/${project}/deploymentRule`, ruleBody({ name: 'everything', wildcard: '', mode: 'STAGING', cluster_id: clusterId }), 201);

      // The organization has several clusters: without a rule, naming none is refused (environments' own rule).
      const preview = await createEnvironment(project, { name: 'PR-42' });
      expect(preview).toMatchObject({ mode: 'PREVIEW', cluster_id: secondClusterId });
      expect(await environmentRule(preview.id)).toMatchObject({
        auto_stop: true,
        timezone: 'Europe/Paris',
        start_time: '1970-01-01T07:00:00Z',
        stop_time: '1970-01-01T20:30:00Z',
        weekdays: ['SATURDAY'],
        on_demand_preview: false,
        auto_preview: false,
      });
      expect(await createEnvironment(project, { name: uniqueName('main') })).toMatchObject({ mode: 'STAGING', cluster_id: clusterId });
      expect(await createEnvironment(project, { name: 'pr-43', cluster: clusterId, mode: 'DEVELOPMENT' })).toMatchObject({ mode: 'DEVELOPMENT', cluster_id: clusterId });

      // Priority decides between matching rules.
      const reordered = await call('PUT', `/project/${project}/deploymentRule/order`, { project_deployment_rule_ids_in_order: [everything.id, previews.id] });
      expect(reordered.statusCode, reordered.body).toBe(200);
      const later = await createEnvironment(project, { name: 'pr-44' });
      expect(later).toMatchObject({ mode: 'STAGING', cluster_id: clusterId });
      expect(await environmentRule(later.id)).toMatchObject({ auto_stop: false, timezone: 'UTC', weekdays: ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY'] });

      // Without rules, the environment gets the defaults, and naming no cluster among several is a 400.
      const bare = await createProject(organizationId);
      expectErrorBody(await call('POST', `/project/${bare}/environment`, { name: 'pr-1' }), 400);
      const plain = await createEnvironment(bare, { name: 'pr-1', cluster: clusterId });
      expect(plain.mode).toBe('DEVELOPMENT');
      expect(await environmentRule(plain.id)).toMatchObject({ auto_stop: false, timezone: 'UTC', start_time: '1970-01-01T08:00:00Z', stop_time: '1970-01-01T19:00:00Z' });
    });

    it('a clone gets the schedule of the rule matching its own name', async () => {
      const project = await createProject(organizationId);
      await ok('POST', `/project/${project}/deploymentRule`, ruleBody({ wildcard: '*-nightly', auto_stop: true, timezone: 'Asia/Tokyo', weekdays: ['SUNDAY'] }), 201);
      const source = await createEnvironment(project, { name: 'main', cluster: clusterId });
      const clone = await ok<{ id: string }>('POST', `/environment/${source.id}/clone`, { name: 'main-nightly' }, 201);
      expect(await environmentRule(clone.id)).toMatchObject({ auto_stop: true, timezone: 'Asia/Tokyo', weekdays: ['SUNDAY'] });
      expect(await environmentRule(source.id)).toMatchObject({ auto_stop: false });
    });
  });

  describe('environment deployment rule', () => {
    it('is created with defaults when first read, edited under its own id, and 404 otherwise', async () => {
      const environment = await createEnvironment(projectId, { name: uniqueName('env'), cluster: clusterId });
      // An environment that predates rules has no row until it is read.
      await ctx().database.db.deleteFrom('environment_deployment_rules').where('environment_id', '=', environment.id).execute();
      const [first, second] = await Promise.all([environmentRule(environment.id), environmentRule(environment.id)]);
      expect(first?.id).toBe(second?.id);
      expect(first).toMatchObject({ auto_stop: false, on_demand_preview: false, auto_preview: false, timezone: 'UTC' });

      const edited = await editEnvironmentRule(environment.id, {
        auto_stop: true,
        on_demand_preview: true,
        auto_preview: true,
        timezone: 'America/New_York',
        start_time: '06:15',
        stop_time: '2020-01-01T22:45:00-05:00',
        weekdays: ['SUNDAY', 'MONDAY'],
      });
      expect(edited).toMatchObject({ id: first?.id, auto_stop: true, on_demand_preview: true, auto_preview: true, timezone: 'America/New_York', start_time: '1970-01-01T06:15:00Z', stop_time: '1970-01-01T22:45:00Z', weekdays: ['MONDAY', 'SUNDAY'] });
      expect(await environmentRule(environment.id)).toEqual(edited);

      const body = { auto_stop: false, timezone: 'UTC', start_time: '08:00', stop_time: '19:00', weekdays: ['MONDAY'] };
      expectErrorBody(await call('PUT', `/environment/${environment.id}/deploymentRule/${crypto.randomUUID()}`, body), 404);
      const other = await createEnvironment(projectId, { name: uniqueName('env'), cluster: clusterId });
      expectErrorBody(await call('PUT', `/environment/${other.id}/deploymentRule/${edited.id}`, body), 404);
      expectErrorBody(await call('GET', `/environment/${crypto.randomUUID()}/deploymentRule`), 404);

      const stranger = await ctx().signUpWithOrganization();
      expectErrorBody(await call('GET', `/environment/${environment.id}/deploymentRule`, undefined, stranger.owner.auth), 404);
      expectErrorBody(await call('PUT', `/environment/${environment.id}/deploymentRule/${edited.id}`, body, stranger.owner.auth), 404);
      expect(await environmentRule(environment.id)).toEqual(edited);
    });

    it('refuses bad schedules with 400 naming the field', async () => {
      const environment = await createEnvironment(projectId, { name: uniqueName('env'), cluster: clusterId });
      const rule = await environmentRule(environment.id);
      const good = { auto_stop: true, timezone: 'Europe/Paris', start_time: '08:00', stop_time: '19:00', weekdays: ['MONDAY'] };
      for (const [body, field] of [
        [{ ...good, start_time: '25:00' }, '/start_time'],
        [{ ...good, stop_time: 'later' }, '/stop_time'],
        [{ ...good, timezone: 'Europe/Atlantis' }, '/timezone'],
        [{ ...good, weekdays: ['MONDAY', 'HOLIDAY'] }, '/weekdays/1'],
        [{ ...good, weekdays: [] }, '/weekdays'],
        [{ ...good, stop_time: '08:00' }, '/stop_time'],
      ] as const) {
        const error = expectErrorBody(await call('PUT', `/environment/${environment.id}/deploymentRule/${rule.id}`, body), 400);
        expect(error.details?.map((detail) => detail.field), JSON.stringify(body)).toContain(field);
      }
      expect(await environmentRule(environment.id)).toEqual(rule);
    });
  });

  describe('the schedule', () => {
    it('stops an auto-stopped environment at its stop time, once, in its own time zone and on listed weekdays only', async () => {
      const stopAt = comingMinute();
      const paris = wallClock(stopAt, 'Europe/Paris');
      const schedule = { auto_stop: true, start_time: wallClock(new Date(stopAt.getTime() + 6 * 60 * MINUTE), 'Europe/Paris').time, stop_time: paris.time };

      const inParis = await createEnvironment(projectId, { name: uniqueName('paris'), cluster: clusterId });
      await setState(inParis.id, 'DEPLOYED');
      await editEnvironmentRule(inParis.id, { ...schedule, timezone: 'Europe/Paris', weekdays: ALL_DAYS });
      // The same wall-clock time in UTC comes an hour later.
      const inUtc = await createEnvironment(projectId, { name: uniqueName('utc'), cluster: clusterId });
      await setState(inUtc.id, 'DEPLOYED');
      await editEnvironmentRule(inUtc.id, { ...schedule, timezone: 'UTC', weekdays: ALL_DAYS });
      // Every day but the one the stop time falls on.
      const dayOff = await createEnvironment(projectId, { name: uniqueName('day-off'), cluster: clusterId });
      await setState(dayOff.id, 'DEPLOYED');
      await editEnvironmentRule(dayOff.id, { ...schedule, timezone: 'Europe/Paris', weekdays: ALL_DAYS.filter((day) => day !== paris.weekday) });
      // Not auto-stopped.
      const alwaysOn = await createEnvironment(projectId, { name: uniqueName('always-on'), cluster: clusterId });
      await setState(alwaysOn.id, 'DEPLOYED');
      await editEnvironmentRule(alwaysOn.id, { ...schedule, auto_stop: false, timezone: 'Europe/Paris', weekdays: ALL_DAYS });

      expect(await stateOf(inParis.id)).toBe('DEPLOYED');
      await advancePast(stopAt);
      await vi.waitFor(async () => expect(await actionsOf(inParis.id)).toEqual(['STOP']), { timeout: 10_000, interval: 50 });
      expect(await stateOf(inParis.id)).toBe('QUEUED');
      const triggeredBy = await ctx().database.db.selectFrom('environment_deployments').select('triggered_by').where('environment_id', '=', inParis.id).executeTakeFirstOrThrow();
      expect(triggeredBy.triggered_by).toBe('deployment rule schedule');
      for (const untouched of [inUtc, dayOff, alwaysOn]) {
        expect(await actionsOf(untouched.id)).toEqual([]);
        expect(await stateOf(untouched.id)).toBe('DEPLOYED');
      }

      // Later sweeps do not stop it again (even once the agent stopped it and it was deployed by hand meanwhile).
      await setState(inParis.id, 'DEPLOYED');
      await advancePast(new Date(ctx().clock.now().getTime() + 2 * MINUTE));
      expect(await actionsOf(inParis.id)).toEqual(['STOP']);
      expect(await stateOf(inParis.id)).toBe('DEPLOYED');
    });

    it('deploys a stopped environment again at its start time, and leaves a running one alone', async () => {
      const startAt = comingMinute();
      const paris = wallClock(startAt, 'Europe/Paris');
      const schedule = { auto_stop: true, timezone: 'Europe/Paris', start_time: paris.time, stop_time: wallClock(new Date(startAt.getTime() + 6 * 60 * MINUTE), 'Europe/Paris').time, weekdays: [paris.weekday] };
      const stopped = await createEnvironment(projectId, { name: uniqueName('stopped'), cluster: clusterId });
      await setState(stopped.id, 'STOPPED');
      await editEnvironmentRule(stopped.id, schedule);
      const running = await createEnvironment(projectId, { name: uniqueName('running'), cluster: clusterId });
      await setState(running.id, 'DEPLOYED');
      await editEnvironmentRule(running.id, schedule);

      await advancePast(startAt);
      await vi.waitFor(async () => expect(await actionsOf(stopped.id)).toEqual(['DEPLOY']), { timeout: 10_000, interval: 50 });
      expect(await stateOf(stopped.id)).toBe('QUEUED');
      expect(await actionsOf(running.id)).toEqual([]);
      expect(await stateOf(running.id)).toBe('DEPLOYED');
    });

    it('two sweeps racing (two workers) act once on each due stop', async () => {
      const stopAt = comingMinute();
      const environment = await createEnvironment(projectId, { name: uniqueName('raced'), cluster: clusterId });
      const rule = await editEnvironmentRule(environment.id, { auto_stop: true, timezone: 'UTC', start_time: '03:00', stop_time: wallClock(stopAt, 'UTC').time, weekdays: ALL_DAYS });
      // Nothing else is due for this service's sweeps: only this environment's rule is left auto-stopped.
      await ctx().database.db.updateTable('environment_deployment_rules').set({ auto_stop: 0 }).where('id', '!=', rule.id).execute();
      const stops: string[] = [];
      const clock = { now: () => new Date(stopAt.getTime() + 30_000) };
      const sweeper = () =>
        createDeploymentRulesService({
          db: ctx().database.db,
          clock,
          clusters: { findClusterSummary: async () => undefined },
          deployments: {
            findEnvironmentState: async () => 'DEPLOYED',
            stopEnvironment: async (_requester: Requester, environmentId: string) => stops.push(environmentId),
            deployEnvironment: async () => {
              throw new Error('not due');
            },
          },
          log: { info: () => undefined },
        });
      const acted = await Promise.all([sweeper().applyDueSchedules(), sweeper().applyDueSchedules(), sweeper().applyDueSchedules()]);
      expect(acted.reduce((sum, count) => sum + count, 0)).toBe(1);
      expect(stops).toEqual([environment.id]);
      expect(await sweeper().applyDueSchedules()).toBe(0);
    });
  });
});
