import { Command } from 'commander';
import { passwordFromStdin, passwordFromTerminal } from './password-input.ts';
import { CliError, login, logout } from './sign-in.ts';
import { signUp, verifyEmail } from './sign-up.ts';
import { acceptInvitation, createOrganization, createProject, inviteMember, listInvitations, listMembers, listOrganizations, listProjects, removeMember, revokeInvitation, setMemberRole, transferOwnership, useOrganization, type OrganizationOptions } from './team.ts';
import { whoami } from './whoami.ts';
import { showInstallationCa } from './https-ca.ts';
import { clientCommand, email, io, nonBlank, SERVER_OPTION, JSON_OPTION, ORG_OPTION } from './command-options.ts';

/** Signing in and the organization's people and projects. */
export function registerTeamCommands(program: Command): void {
  program
    .command('login')
    .description('sign in with your browser (device code); the credentials are kept in ~/.config/slipway/credentials.json')
    .option(...SERVER_OPTION)
    .option('--issuer <url>', 'an external OpenID Connect issuer to sign in with (default: the server\'s built-in one, <url>/oidc)')
    .option('--client-id <id>', 'the public client registered at the external issuer for the CLI (device grant)')
    .option('--audience <audience>', 'the API audience to ask the external issuer for (Auth0: the API identifier)')
    .action((options: { url?: string; issuer?: string; clientId?: string; audience?: string }) =>
      clientCommand(async () => {
        if ((options.issuer === undefined) !== (options.clientId === undefined)) throw new CliError('--issuer and --client-id go together');
        await login(options, io);
      }),
    );

  program
    .command('logout')
    .description('forget the credentials for the server and revoke its refresh token')
    .option(...SERVER_OPTION)
    .action((options: { url?: string }) => clientCommand(() => logout(options, io)));

  program
    .command('whoami')
    .description('show who the server takes you for (SLIPWAY_TOKEN, when set, is used instead of the stored sign-in)')
    .option(...SERVER_OPTION)
    .action((options: { url?: string }) => clientCommand(() => whoami(options, io)));

  program
    .command('https')
    .description("the installation's HTTPS (docs/https.md)")
    .command('ca')
    .description("print the installation CA's root certificate, which signs the services' private names (*.localhost), and how to trust it")
    .option(...SERVER_OPTION)
    .option('--output <file>', 'write it to this file instead of standard output')
    .action((options: { url?: string; output?: string }) => clientCommand(() => showInstallationCa(options, io, (text) => process.stderr.write(text))));


  program
    .command('signup')
    .description('create an account at the server\'s built-in identity provider; the password is asked for, or read with --password-stdin')
    .requiredOption('--email <email>', 'your e-mail address (a verification link is sent to it)', email)
    .option('--name <name>', 'your display name', nonBlank)
    .option('--password-stdin', 'read the password from standard input')
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((options: { email: string; name?: string; passwordStdin?: boolean; url?: string; json?: boolean }) =>
      clientCommand(async () => {
        const password = options.passwordStdin === true ? await passwordFromStdin(process.stdin) : await passwordFromTerminal(process.stdin, process.stderr);
        await signUp({ ...options, password }, io);
      }),
    );

  program
    .command('verify')
    .description('verify your e-mail address with the link from the sign-up e-mail (or click the link instead)')
    .argument('<link>', 'the verification link from the e-mail')
    .option(...JSON_OPTION)
    .action((link: string, options: { json?: boolean }) => clientCommand(() => verifyEmail(link, options, io)));

  const org = program.command('org').description('your organizations, and the one commands act on');

  org
    .command('list')
    .description('the organizations you belong to (* marks the current one)')
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((options: { url?: string; json?: boolean }) => clientCommand(() => listOrganizations(options, io)));

  org
    .command('create')
    .description('create an organization you own and make it the current one')
    .argument('<name>', 'its name', nonBlank)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((name: string, options: { url?: string; json?: boolean }) => clientCommand(() => createOrganization(name, options, io)));

  org
    .command('use')
    .description('make an organization the current one (kept in ~/.config/slipway/config.json)')
    .argument('<id|name>', 'the organization\'s id or name')
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((wanted: string, options: { url?: string; json?: boolean }) => clientCommand(() => useOrganization(wanted, options, io)));

  const members = program.command('members').description('the members of the current organization');

  members
    .command('list')
    .description('members with their roles')
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((options: OrganizationOptions) => clientCommand(() => listMembers(options, io)));

  members
    .command('set-role')
    .description('give a member another role (OWNER changes only by transfer-ownership)')
    .argument('<email|user-id>', 'the member')
    .argument('<role>', 'ADMIN, DEVELOPER, VIEWER or a custom role of the organization')
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((who: string, role: string, options: OrganizationOptions) => clientCommand(() => setMemberRole(who, role, options, io)));

  members
    .command('remove')
    .description('remove a member from the organization')
    .argument('<email|user-id>', 'the member')
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((who: string, options: OrganizationOptions) => clientCommand(() => removeMember(who, options, io)));

  members
    .command('transfer-ownership')
    .description('make another member the owner; you become ADMIN (owner only)')
    .argument('<email|user-id>', 'the member')
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((who: string, options: OrganizationOptions) => clientCommand(() => transferOwnership(who, options, io)));

  program
    .command('invite')
    .description('invite someone to the current organization by e-mail')
    .argument('<email>', 'their e-mail address (the server checks it)')
    .option('--role <role>', 'the role they get on accepting (default VIEWER)')
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((address: string, options: OrganizationOptions & { role?: string }) => clientCommand(() => inviteMember(address, options, io)));

  const invitations = program.command('invitations').description('invitations to the current organization, and accepting yours');

  invitations
    .command('list')
    .description('pending and expired invitations')
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((options: OrganizationOptions) => clientCommand(() => listInvitations(options, io)));

  invitations
    .command('revoke')
    .description('withdraw an invitation')
    .argument('<id>', 'the invitation id (see invitations list)')
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((id: string, options: OrganizationOptions) => clientCommand(() => revokeInvitation(id, options, io)));

  invitations
    .command('accept')
    .description('accept an invitation sent to your verified e-mail; its organization becomes the current one')
    .argument('<link-or-id>', 'the link from the invitation e-mail, or the invitation id with --org <organization id>')
    .option('--org <id>', 'the organization id, when giving an invitation id instead of the link')
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((linkOrId: string, options: OrganizationOptions) => clientCommand(() => acceptInvitation(linkOrId, options, io)));

  const projects = program.command('projects').description('the projects of the current organization');

  projects
    .command('list')
    .description('the organization\'s projects')
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((options: OrganizationOptions) => clientCommand(() => listProjects(options, io)));

  projects
    .command('create')
    .description('create a project')
    .argument('<name>', 'its name (unique within the organization)', nonBlank)
    .option('--description <text>', 'what it is for')
    .option(...ORG_OPTION)
    .option(...SERVER_OPTION)
    .option(...JSON_OPTION)
    .action((name: string, options: OrganizationOptions & { description?: string }) => clientCommand(() => createProject(name, options, io)));
}
