import { connect, dataOf, type AnswerOf, type ApiClient } from './api-client.ts';
import type { components } from './api-types.generated.ts';
import { readSettings, rememberOrganization } from './cli-settings.ts';
import { printJson, printTable } from './output.ts';
import { CliError, type CliIo } from './sign-in.ts';

/**
 * The team commands: organizations, members, invitations and projects, each one or a few REST calls with the
 * caller's token. Organization-scoped commands act on --org, else SLIPWAY_ORGANIZATION, else the organization
 * remembered by `slipway org use` (or `org create`, or accepting an invitation) for the server.
 */
export interface CommandOptions {
  url?: string | undefined;
  json?: boolean | undefined;
}

export interface OrganizationOptions extends CommandOptions {
  org?: string | undefined;
}

type OrganizationRow = AnswerOf<'listOrganization'>['results'][number];
type MemberRow = AnswerOf<'getOrganizationMembers'>['results'][number];
type InviteRole = components['schemas']['InviteMemberRoleEnum'];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INVITATION_PATH = /\/organization\/([0-9a-f-]{36})\/inviteMember\/([0-9a-f-]{36})\/?$/i;

async function organizations(client: ApiClient): Promise<OrganizationRow[]> {
  return (await dataOf(client.api.GET('/organization'))).results;
}

/** An organization named by id, or by name among the caller's organizations (case-insensitive, unambiguous). */
async function organizationNamed(client: ApiClient, wanted: string): Promise<string> {
  if (UUID.test(wanted)) return wanted.toLowerCase();
  const matching = (await organizations(client)).filter((organization) => organization.name.toLowerCase() === wanted.toLowerCase());
  if (matching.length === 0) throw new CliError(`you belong to no organization named "${wanted}"; see slipway org list`);
  if (matching.length > 1) throw new CliError(`several of your organizations are named "${wanted}"; give its id instead`);
  return (matching[0] as OrganizationRow).id;
}

async function currentOrganization(client: ApiClient, option: string | undefined, io: CliIo): Promise<string> {
  const fromEnv = io.env.SLIPWAY_ORGANIZATION !== undefined && io.env.SLIPWAY_ORGANIZATION !== '' ? io.env.SLIPWAY_ORGANIZATION : undefined;
  const wanted = option ?? fromEnv ?? (await readSettings(io.env)).organizations[client.server];
  if (wanted === undefined) throw new CliError('no organization chosen: run slipway org use <id|name>, or pass --org <id|name>');
  return organizationNamed(client, wanted);
}

export async function organizationScope(options: OrganizationOptions, io: CliIo): Promise<{ client: ApiClient; organizationId: string }> {
  const client = await connect(options, io);
  return { client, organizationId: await currentOrganization(client, options.org, io) };
}

// Organizations

export async function listOrganizations(options: CommandOptions, io: CliIo): Promise<void> {
  const client = await connect(options, io);
  const body = await dataOf(client.api.GET('/organization'));
  if (options.json === true) return printJson(io, body);
  const current = (await readSettings(io.env)).organizations[client.server];
  const rows = body.results.map((organization) => [organization.id === current ? '*' : '', organization.id, organization.name]);
  printTable(io, ['', 'ID', 'NAME'], rows, 'You belong to no organization. Create one with slipway org create <name>, or accept an invitation.');
}

export async function createOrganization(name: string, options: CommandOptions, io: CliIo): Promise<void> {
  const client = await connect(options, io);
  const created = await dataOf(client.api.POST('/organization', { body: { name } }));
  await rememberOrganization(io.env, client.server, created.id);
  if (options.json === true) return printJson(io, created);
  io.out(`Created organization ${created.name} (${created.id}); it is now your current organization.\n`);
}

export async function useOrganization(wanted: string, options: CommandOptions, io: CliIo): Promise<void> {
  const client = await connect(options, io);
  const all = await organizations(client);
  const organizationId = await organizationNamed(client, wanted);
  const chosen = all.find((organization) => organization.id === organizationId);
  // Checked against the caller's own list, so a typo or an organization one has left is caught now, not later.
  if (chosen === undefined) throw new CliError(`you belong to no organization with id ${wanted}; see slipway org list`);
  await rememberOrganization(io.env, client.server, chosen.id);
  if (options.json === true) return printJson(io, chosen);
  io.out(`Now using organization ${chosen.name} (${chosen.id}).\n`);
}

// Members

async function members(client: ApiClient, organizationId: string): Promise<MemberRow[]> {
  return (await dataOf(client.api.GET('/organization/{organizationId}/member', { params: { path: { organizationId } } }))).results;
}

/**
 * A member named by e-mail (case-insensitive) or user id. An id that is not in the list is passed on as it is, so
 * the API gives its own answer about a non-member.
 */
async function memberNamed(client: ApiClient, organizationId: string, who: string): Promise<{ id: string; label: string }> {
  const all = await members(client, organizationId);
  if (who.includes('@')) {
    const member = all.find((candidate) => candidate.email.toLowerCase() === who.toLowerCase());
    if (member === undefined) throw new CliError(`${who} is not a member of this organization; see slipway members list`);
    return { id: member.id, label: member.email };
  }
  if (!UUID.test(who)) throw new CliError(`"${who}" is neither an e-mail address nor a user id`);
  const member = all.find((candidate) => candidate.id.toLowerCase() === who.toLowerCase());
  return { id: who.toLowerCase(), label: member?.email ?? who };
}

async function roleNamed(client: ApiClient, organizationId: string, wanted: string): Promise<{ id: string; name: string }> {
  const { results: roles } = await dataOf(client.api.GET('/organization/{organizationId}/availableRole', { params: { path: { organizationId } } }));
  const role = roles.find((candidate) => candidate.name.toLowerCase() === wanted.toLowerCase() || candidate.id === wanted);
  if (role === undefined) throw new CliError(`unknown role "${wanted}"; the roles of this organization are ${roles.map((candidate) => candidate.name).join(', ')}`);
  return role;
}

export async function listMembers(options: OrganizationOptions, io: CliIo): Promise<void> {
  const { client, organizationId } = await organizationScope(options, io);
  const body = await dataOf(client.api.GET('/organization/{organizationId}/member', { params: { path: { organizationId } } }));
  if (options.json === true) return printJson(io, body);
  // role_name names a custom role; role holds the reference's nearest built-in one, kept for generated clients.
  const rows = body.results.map((member) => [member.id, member.email, member.name ?? '', member.role_name ?? member.role]);
  printTable(io, ['USER ID', 'EMAIL', 'NAME', 'ROLE'], rows, 'No members.');
}

export async function setMemberRole(who: string, roleName: string, options: OrganizationOptions, io: CliIo): Promise<void> {
  const { client, organizationId } = await organizationScope(options, io);
  const member = await memberNamed(client, organizationId, who);
  const role = await roleNamed(client, organizationId, roleName);
  await client.api.PUT('/organization/{organizationId}/member', { params: { path: { organizationId } }, body: { user_id: member.id, role_id: role.id } });
  if (options.json === true) return printJson(io, { user_id: member.id, email: member.label, role: role.name, role_id: role.id });
  io.out(`${member.label} is now ${role.name}.\n`);
}

export async function removeMember(who: string, options: OrganizationOptions, io: CliIo): Promise<void> {
  const { client, organizationId } = await organizationScope(options, io);
  const member = await memberNamed(client, organizationId, who);
  await client.api.DELETE('/organization/{organizationId}/member', { params: { path: { organizationId } }, body: { user_id: member.id } });
  if (options.json === true) return printJson(io, { user_id: member.id, email: member.label, removed: true });
  io.out(`Removed ${member.label} from the organization.\n`);
}

export async function transferOwnership(who: string, options: OrganizationOptions, io: CliIo): Promise<void> {
  const { client, organizationId } = await organizationScope(options, io);
  const member = await memberNamed(client, organizationId, who);
  await client.api.POST('/organization/{organizationId}/transferOwnership', { params: { path: { organizationId } }, body: { user_id: member.id } });
  if (options.json === true) return printJson(io, { owner: member.id, email: member.label });
  io.out(`${member.label} now owns the organization; you are ADMIN.\n`);
}

// Invitations

export async function inviteMember(email: string, options: OrganizationOptions & { role?: string | undefined }, io: CliIo): Promise<void> {
  const { client, organizationId } = await organizationScope(options, io);
  // Passed on unchecked (a cast, not a test): the server judges the role, and refuses another in its own words.
  const body = { email, ...(options.role === undefined ? {} : { role: options.role.toUpperCase() as InviteRole }) };
  const created = await dataOf(client.api.POST('/organization/{organizationId}/inviteMember', { params: { path: { organizationId } }, body }));
  if (options.json === true) return printJson(io, created);
  io.out(`Invited ${created.email} to ${created.organization_name} as ${created.role_name ?? created.role} (invitation ${created.id}, expires ${created.expires_at}).\n`);
  io.out('The invitation e-mail carries the link to accept it: slipway invitations accept <link>.\n');
}

export async function listInvitations(options: OrganizationOptions, io: CliIo): Promise<void> {
  const { client, organizationId } = await organizationScope(options, io);
  const body = await dataOf(client.api.GET('/organization/{organizationId}/inviteMember', { params: { path: { organizationId } } }));
  if (options.json === true) return printJson(io, body);
  const rows = body.results.map((invitation) => [invitation.id, invitation.email, invitation.role_name ?? invitation.role, invitation.invitation_status, invitation.expires_at]);
  printTable(io, ['ID', 'EMAIL', 'ROLE', 'STATUS', 'EXPIRES'], rows, 'No open invitations.');
}

export async function revokeInvitation(invitationId: string, options: OrganizationOptions, io: CliIo): Promise<void> {
  if (!UUID.test(invitationId)) throw new CliError(`"${invitationId}" is not an invitation id; see slipway invitations list`);
  const { client, organizationId } = await organizationScope(options, io);
  await client.api.DELETE('/organization/{organizationId}/inviteMember/{inviteId}', { params: { path: { organizationId, inviteId: invitationId.toLowerCase() } } });
  if (options.json === true) return printJson(io, { id: invitationId.toLowerCase(), revoked: true });
  io.out(`Revoked invitation ${invitationId}.\n`);
}

/**
 * The organization and invitation an acceptance link (`<server>/organization/{orgId}/inviteMember/{inviteId}`)
 * names, or a bare invitation id with the organization from --org (an id: the invitee is not a member yet, so
 * names cannot be looked up).
 */
function invitationTarget(linkOrId: string, org: string | undefined): { organizationId: string; invitationId: string } {
  if (UUID.test(linkOrId)) {
    if (org === undefined || !UUID.test(org)) throw new CliError('give the link from the invitation e-mail, or the invitation id with --org <organization id>');
    return { organizationId: org.toLowerCase(), invitationId: linkOrId.toLowerCase() };
  }
  let url: URL;
  try {
    url = new URL(linkOrId);
  } catch {
    throw new CliError(`"${linkOrId}" is neither an invitation link nor an invitation id`);
  }
  const match = INVITATION_PATH.exec(url.pathname);
  if (match === null || !UUID.test(match[1] as string) || !UUID.test(match[2] as string)) {
    throw new CliError(`${linkOrId} is not a Slipway invitation link (…/organization/<id>/inviteMember/<id>)`);
  }
  return { organizationId: (match[1] as string).toLowerCase(), invitationId: (match[2] as string).toLowerCase() };
}

export async function acceptInvitation(linkOrId: string, options: OrganizationOptions, io: CliIo): Promise<void> {
  const { organizationId, invitationId } = invitationTarget(linkOrId, options.org);
  const client = await connect(options, io);
  const accepted = await dataOf(client.api.POST('/organization/{organizationId}/inviteMember/{inviteId}', { params: { path: { organizationId, inviteId: invitationId } } }));
  await rememberOrganization(io.env, client.server, organizationId);
  if (options.json === true) return printJson(io, { ...accepted, organization_id: organizationId });
  io.out(`Joined ${accepted.organization_name} as ${accepted.role_name ?? accepted.role}; it is now your current organization.\n`);
}

// Projects

export async function listProjects(options: OrganizationOptions, io: CliIo): Promise<void> {
  const { client, organizationId } = await organizationScope(options, io);
  const body = await dataOf(client.api.GET('/organization/{organizationId}/project', { params: { path: { organizationId } } }));
  if (options.json === true) return printJson(io, body);
  const rows = body.results.map((project) => [project.id, project.name, project.description ?? '']);
  printTable(io, ['ID', 'NAME', 'DESCRIPTION'], rows, 'No projects.');
}

export async function createProject(name: string, options: OrganizationOptions & { description?: string | undefined }, io: CliIo): Promise<void> {
  const { client, organizationId } = await organizationScope(options, io);
  const body = { name, ...(options.description === undefined ? {} : { description: options.description }) };
  const created = await dataOf(client.api.POST('/organization/{organizationId}/project', { params: { path: { organizationId } }, body }));
  if (options.json === true) return printJson(io, created);
  io.out(`Created project ${created.name} (${created.id}).\n`);
}
