import { expect, it } from 'vitest';
import { newId } from '../src/lib/ids.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * The lists that grow (issue 26, docs/operations.md "Data at scale"), paged by their own cursors over more rows than
 * a page: every row exactly once, in the list's order, with and without filters; a cursor that is not one of the
 * list's is a 400 with the error body. Events are written straight into the log, shaped as the audit hook writes
 * them, so a run can hold many more than a test's requests would leave and several at one instant (the id breaks
 * the tie).
 */

interface EventPage {
  events: { id: string; timestamp: string; target_id: string | null; project_id: string | null; project_name?: string; triggered_by: string }[];
  links: { previous?: string; next?: string };
}

const EVENTS = 230;
const PAGE_SIZE = 7;

describeEachDatabase('list paging', (ctx) => {
  let owner: TestUser;
  let organizationId: string;
  let projectIds: string[];
  const memberId = newId();
  const memberName = 'member@example.com';
  /** What the log holds, newest first: the order every page must follow. */
  let written: { id: string; created_at: string; target_id: string; project_id: string; author_id: string; triggered_by: string; event_type: string }[];

  async function page(url: string): Promise<EventPage> {
    const response = await ctx().call(owner.auth, { method: 'GET', url });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<EventPage>();
  }

  /** Follows the `next` links from the first page to the last; answers every event seen, in order. */
  async function walk(query: string): Promise<{ ids: string[]; pages: EventPage[] }> {
    const pages: EventPage[] = [await page(`/organization/${organizationId}/events?pageSize=${PAGE_SIZE}${query}`)];
    for (let next = pages[0]?.links.next; next !== undefined; next = pages[pages.length - 1]?.links.next) {
      expect(pages.length).toBeLessThan(EVENTS);
      pages.push(await page(next));
    }
    return { ids: pages.flatMap((p) => p.events.map((event) => event.id)), pages };
  }

  function expected(keep: (row: (typeof written)[number]) => boolean): string[] {
    return written.filter(keep).map((row) => row.id);
  }

  it('seeds a log longer than many pages', async () => {
    ({ owner, organizationId } = await ctx().signUpWithOrganization());
    projectIds = [];
    for (const name of ['gamma', 'alpha', 'beta']) {
      const response = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/project`, payload: { name: uniqueName(name) } });
      expect(response.statusCode, response.body).toBe(200);
      projectIds.push(response.json<{ id: string }>().id);
    }
    const template = await ctx().database.db.selectFrom('organization_events').selectAll().where('organization_id', '=', organizationId).where('event_type', '=', 'CREATE').executeTakeFirstOrThrow();
    await ctx().database.db.deleteFrom('organization_events').where('organization_id', '=', organizationId).execute();
    const start = ctx().clock.now().getTime() - 60 * 60 * 1000;
    const rows = Array.from({ length: EVENTS }, (_, index) => {
      const projectId = projectIds[index % 3] as string;
      // Every fifth event is the member's: by id on some, by name only on others (what triggeredBy matches).
      const byMember = index % 5 === 0;
      const authorId = byMember && index % 10 === 0 ? memberId : template.author_id;
      const triggeredBy = byMember && index % 10 === 5 ? memberName : template.triggered_by;
      return {
        ...template,
        id: newId(),
        // Three events share each instant: the id orders them.
        created_at: new Date(start + Math.floor(index / 3) * 1000).toISOString(),
        event_type: index % 4 === 0 ? 'DELETE' : 'UPDATE',
        target_id: projectId,
        project_id: projectId,
        author_id: authorId,
        triggered_by: triggeredBy,
        request_id: `paging-${index}`,
      };
    });
    for (let index = 0; index < rows.length; index += 50) await ctx().database.db.insertInto('organization_events').values(rows.slice(index, index + 50)).execute();
    written = rows
      .map((row) => ({ id: row.id, created_at: row.created_at, target_id: row.target_id, project_id: row.project_id, author_id: row.author_id, triggered_by: row.triggered_by, event_type: row.event_type }))
      .sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1));
  });

  it('pages the whole audit log newest first through its continueToken, each event once', async () => {
    const { ids, pages } = await walk('');
    expect(ids).toEqual(expected(() => true));
    expect(pages.length).toBe(Math.ceil(EVENTS / PAGE_SIZE));
    expect(pages.slice(0, -1).every((p) => p.events.length === PAGE_SIZE)).toBe(true);
    expect(pages[0]?.links.previous).toBeUndefined();
    expect(pages[pages.length - 1]?.links.next).toBeUndefined();
  });

  it('pages a filtered log: by target, by project and type, by author (id or name), by time', async () => {
    const target = projectIds[1] as string;
    expect((await walk(`&targetId=${target}`)).ids).toEqual(expected((row) => row.target_id === target));
    expect((await walk(`&serviceProjectId=${target}&eventType=DELETE`)).ids).toEqual(expected((row) => row.project_id === target && row.event_type === 'DELETE'));
    const byMemberId = await walk(`&triggeredBy=${memberId}`);
    expect(byMemberId.ids).toEqual(expected((row) => row.author_id === memberId || row.triggered_by === memberId));
    expect(byMemberId.ids.length).toBeGreaterThan(PAGE_SIZE);
    const byMemberName = await walk(`&triggeredBy=${encodeURIComponent(memberName)}`);
    expect(byMemberName.ids).toEqual(expected((row) => row.triggered_by === memberName || row.author_id === memberName));
    expect(byMemberName.ids.length).toBeGreaterThan(PAGE_SIZE);
    const middle = written[Math.floor(EVENTS / 2)]?.created_at as string;
    const last = written[Math.floor(EVENTS / 4)]?.created_at as string;
    expect((await walk(`&fromTimestamp=${middle}&toTimestamp=${last}`)).ids).toEqual(expected((row) => row.created_at >= middle && row.created_at <= last));
  });

  it('pages back from the last page through the previous links to the first, each event once', async () => {
    const target = projectIds[2] as string;
    const { pages } = await walk(`&targetId=${target}`);
    const back: string[][] = [];
    let current = pages[pages.length - 1] as EventPage;
    back.unshift(current.events.map((event) => event.id));
    while (current.links.previous !== undefined) {
      current = await page(current.links.previous);
      back.unshift(current.events.map((event) => event.id));
    }
    expect(back.flat()).toEqual(expected((row) => row.target_id === target));
  });

  it('names the project of each event on every page, from one read of the page', async () => {
    const names = new Map<string, string>();
    for (const id of projectIds) {
      const response = await ctx().call(owner.auth, { method: 'GET', url: `/project/${id}` });
      names.set(id, response.json<{ name: string }>().name);
    }
    const first = await page(`/organization/${organizationId}/events?pageSize=${PAGE_SIZE}`);
    for (const event of first.events) expect(event.project_name).toBe(names.get(event.project_id as string));
  });

  it('refuses a cursor that is not one of the list’s with 400 and the error body', async () => {
    const base = `/organization/${organizationId}/events`;
    const notACursor = Buffer.from('yesterday|someone', 'utf8').toString('base64url');
    const badTime = Buffer.from(`not-a-time|${newId()}`, 'utf8').toString('base64url');
    for (const query of [`?continueToken=${notACursor}`, `?stepBackToken=${badTime}`, '?continueToken=%E2%9C%93']) {
      const body = expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `${base}${query}` }), 400);
      expect(body.message.length).toBeGreaterThan(0);
    }
  });

  it('lists projects, environments and variables in name order, each once', async () => {
    const created = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/cluster`, payload: { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' } });
    expect(created.statusCode, created.body).toBe(201);
    const projects = (await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/project` })).json<{ results: { id: string; name: string }[] }>().results;
    expect(projects.map((p) => p.name)).toEqual(projects.map((p) => p.name).sort());
    expect(new Set(projects.map((p) => p.id)).size).toBe(projects.length);
    expect(projects.map((p) => p.id).sort()).toEqual([...projectIds].sort());

    const projectId = projectIds[0] as string;
    for (const name of ['zeta', 'eta', 'theta', 'Beta']) {
      const response = await ctx().call(owner.auth, { method: 'POST', url: `/project/${projectId}/environment`, payload: { name, mode: 'DEVELOPMENT' } });
      expect(response.statusCode, response.body).toBe(201);
    }
    const environments = (await ctx().call(owner.auth, { method: 'GET', url: `/project/${projectId}/environment` })).json<{ results: { name: string }[] }>().results;
    expect(environments.map((e) => e.name)).toEqual(['Beta', 'eta', 'theta', 'zeta']);

    const keys = ['ZED', 'ALPHA', 'MIDDLE', 'BRAVO'];
    for (const key of keys) {
      const response = await ctx().call(owner.auth, { method: 'POST', url: `/project/${projectId}/environmentVariable`, payload: { key, value: key.toLowerCase() } });
      expect(response.statusCode, response.body).toBe(201);
    }
    const variables = (await ctx().call(owner.auth, { method: 'GET', url: `/project/${projectId}/environmentVariable` })).json<{ results: { key: string; scope: string }[] }>().results;
    const own = variables.filter((variable) => variable.scope === 'PROJECT').map((variable) => variable.key);
    expect(own).toEqual([...keys].sort());
  });
});
