import { Command, InvalidArgumentError } from 'commander';
import { AppError } from '../lib/errors.ts';
import { SLIPWAY_VERSION } from '../lib/version.ts';
import { CredentialsUnreadable } from './credentials.ts';
import { passwordFromStdin, passwordFromTerminal } from './password-input.ts';
import { CliError, login, logout, type CliIo } from './sign-in.ts';
import type { EnvironmentOptions } from './services.ts';
import { signUp, verifyEmail } from './sign-up.ts';
import {
  acceptInvitation,
  createOrganization,
  createProject,
  inviteMember,
  listInvitations,
  listMembers,
  listOrganizations,
  listProjects,
  removeMember,
  revokeInvitation,
  setMemberRole,
  transferOwnership,
  useOrganization,
  type OrganizationOptions,
} from './team.ts';
import { whoami } from './whoami.ts';

/**
 * The `slipway` command. Server-side commands take their configuration from the same SLIPWAY_* variables as the
 * server and load it (and the server's modules) only when run, so client commands start quickly.
 */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function email(value: string): string {
  if (!EMAIL.test(value)) throw new InvalidArgumentError('not an e-mail address');
  return value;
}

function taskConcurrency(value: string): number {
  const count = Number(value);
  if (!Number.isInteger(count) || count < 1 || count > 20) throw new InvalidArgumentError('must be a whole number from 1 to 20');
  return count;
}

function nonBlank(value: string): string {
  if (value.trim() === '' || value.length > 255) throw new InvalidArgumentError('must be 1 to 255 characters');
  return value;
}

/**
 * A reader that goes away early (`slipway service list | head -1`) is not a failure: the first EPIPE on standard
 * output or standard error ends the process at once and quietly, with the status it already had (0 unless the
 * command had failed). Node ignores SIGPIPE, so without this the write's error surfaces as a stack trace.
 */
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
    throw error;
  });
}

const program = new Command('slipway').description('Slipway deployment platform').version(SLIPWAY_VERSION, '-V, --version', 'print the version').showHelpAfterError();

program
  .command('server')
  .description('serve the API (the same as npm start)')
  .action(async () => {
    const { runServer } = await import('../main.ts');
    const { loadConfigOrExit } = await import('../config.ts');
    await runServer(loadConfigOrExit());
  });

program
  .command('agent')
  .description("run a cluster's agent on this host (enrolls once with the cluster's one-time token)")
  .requiredOption('--control-plane <url>', 'the Slipway API the agent works for, e.g. https://slipway.example.com')
  .option('--enrollment-token <token>', "the one-time token of the cluster's operator bootstrap (first start only)")
  .option('--driver <driver>', 'what runs the workloads: local (processes on this host)', 'local')
  .option('--state-dir <dir>', 'where workloads, data and the credential live (default: $SLIPWAY_DATA_DIR/agent)')
  .option('--concurrency <n>', 'how many tasks (builds, database starts, teardowns) run at once, 1 to 20 (default: $SLIPWAY_AGENT_CONCURRENCY, 4)', taskConcurrency)
  .action(async (options: { controlPlane: string; enrollmentToken?: string; driver: string; stateDir?: string; concurrency?: number }) => {
    const { loadConfigOrExit } = await import('../config.ts');
    const { runAgentCommand } = await import('./agent-command.ts');
    try {
      await runAgentCommand(loadConfigOrExit(), options, (line) => process.stdout.write(`${line}\n`));
    } catch (error) {
      if (error instanceof CliError) {
        process.stderr.write(`slipway: ${error.message}\n`);
        process.exitCode = 1;
        return;
      }
      throw error;
    }
  });

program
  .command('git')
  .description('git helpers for local work')
  .command('serve <directory>')
  .description('serve the bare repositories under <directory> (<name>.git) over HTTP, to deploy local work to a local Slipway')
  .option('--port <port>', 'port to listen on (0: any free port)', '9418')
  .option('--host <host>', 'address to listen on', '127.0.0.1')
  .action(async (directory: string, options: { port: string; host: string }) => {
    const port = Number(options.port);
    if (!/^\d+$/.test(options.port) || port > 65535) {
      process.stderr.write(`slipway: --port must be an integer from 0 to 65535, got "${options.port}"\n`);
      process.exitCode = 1;
      return;
    }
    const { resolve } = await import('node:path');
    const { startGitHttpServer } = await import('../git/git-http-server.ts');
    const { address } = await startGitHttpServer(resolve(directory), port, options.host);
    process.stdout.write(`serving the repositories under ${resolve(directory)} at http://${address.address}:${address.port}/<name>.git\n`);
  });

const admin = program.command('admin').description('installation administration (works on the database directly)');

admin
  .command('bootstrap')
  .description('create the first user, an organization they own and an ADMIN API token (shown only once)')
  .requiredOption('--email <email>', 'e-mail of the first administrator', email)
  .requiredOption('--organization <name>', 'name of the organization to create', nonBlank)
  .option('--name <name>', 'display name of the administrator', nonBlank)
  .option('--json', 'print {"user_id","organization_id","api_token"} as JSON')
  .action(async (options: { email: string; organization: string; name?: string; json?: boolean }) => {
    try {
      const { loadConfigOrExit } = await import('../config.ts');
      const { bootstrapInstallation } = await import('./admin-bootstrap.ts');
      const result = await bootstrapInstallation(loadConfigOrExit(), options);
      if (options.json === true) {
        process.stdout.write(`${JSON.stringify(result)}\n`);
      } else {
        process.stdout.write(
          `user:         ${result.user_id}\norganization: ${result.organization_id}\n` +
            `api token:    ${result.api_token}\n\nThe token is shown only now. Use it as "Authorization: Token <token>".\n`,
        );
      }
    } catch (error) {
      if (error instanceof AppError) {
        process.stderr.write(`slipway: ${error.message}\n`);
        process.exitCode = 1;
        return;
      }
      throw error;
    }
  });

admin
  .command('rotate-signing-key')
  .description('make a new key sign the built-in identity provider\'s tokens; the old key stays published until its tokens expire')
  .action(async () => {
    const { loadConfigOrExit } = await import('../config.ts');
    const { rotateInstallationSigningKey } = await import('./admin-keys.ts');
    const kid = await rotateInstallationSigningKey(loadConfigOrExit());
    process.stdout.write(`signing key: ${kid}\n`);
  });

/** Runs an operator command on the database; its refusals (AppError) end the process with one line and status 1. */
async function operatorCommand(run: () => Promise<string>): Promise<void> {
  try {
    process.stdout.write(await run());
  } catch (error) {
    if (error instanceof AppError) {
      process.stderr.write(`slipway: ${error.message}\n`);
      process.exitCode = 1;
      return;
    }
    throw error;
  }
}

const creditCode = admin.command('credit-code').description('credit codes organizations redeem with addCreditCode');
creditCode
  .command('create')
  .description('create a single-use credit code (shown only once)')
  .requiredOption('--amount <amount>', 'credit in currency units, e.g. 25.00')
  .requiredOption('--expires <date>', 'last day it can be redeemed (YYYY-MM-DD) or an ISO-8601 date-time')
  .option('--json', 'print the code as JSON')
  .action(async (options: { amount: string; expires: string; json?: boolean }) =>
    operatorCommand(async () => {
      const { loadConfigOrExit } = await import('../config.ts');
      const { createCreditCode } = await import('./admin-billing.ts');
      const created = await createCreditCode(loadConfigOrExit(), options);
      return options.json === true
        ? `${JSON.stringify(created)}\n`
        : `credit code: ${created.code}\namount:      ${(created.amount_in_cents / 100).toFixed(2)} ${created.currency_code}\nexpires:     ${created.expires_at}\n\nThe code is shown only now.\n`;
    }),
  );

const invoices = admin.command('invoices').description('invoices of every organization');
invoices
  .command('generate')
  .description('invoice a finished billing period for every organization (again: no-op for those already invoiced)')
  .requiredOption('--period <YYYY-MM>', 'the billing month')
  .action(async (options: { period: string }) =>
    operatorCommand(async () => {
      const { loadConfigOrExit } = await import('../config.ts');
      const { generateInvoices } = await import('./admin-billing.ts');
      const result = await generateInvoices(loadConfigOrExit(), options.period);
      return `period ${result.period}: ${result.created} invoice(s) created, ${result.existing} already there\n`;
    }),
  );
invoices
  .command('mark-paid <invoiceId>')
  .description('record that an invoice was paid (by transfer, or any payment outside Slipway)')
  .option('--reference <text>', 'the payment reference, kept with the invoice')
  .action(async (invoiceId: string, options: { reference?: string }) =>
    operatorCommand(async () => {
      const { loadConfigOrExit } = await import('../config.ts');
      const { markInvoicePaid } = await import('./admin-billing.ts');
      const invoice = await markInvoicePaid(loadConfigOrExit(), invoiceId, options.reference);
      return `invoice ${invoice.id} (${invoice.period}) is ${invoice.status}\n`;
    }),
  );

// A LOCAL cluster's workloads run on this host: only the organizations the operator allows may create or deploy onto one.
const localClusters = admin.command('local-clusters').description('which organizations may create LOCAL clusters (workloads on this host) and deploy onto them');
const ORGANIZATION_OPTION = ['--organization <id|name>', 'the organization, by id or name', nonBlank] as const;
localClusters
  .command('allow')
  .description('let an organization create LOCAL clusters and deploy onto them')
  .requiredOption(...ORGANIZATION_OPTION)
  .option('--json', 'print what changed as JSON')
  .action(async (options: { organization: string; json?: boolean }) =>
    operatorCommand(async () => {
      const { loadConfigOrExit } = await import('../config.ts');
      const { allowOrganization } = await import('./admin-local-clusters.ts');
      return allowOrganization(loadConfigOrExit(), options.organization, options);
    }),
  );
localClusters
  .command('deny')
  .description('refuse an organization\'s future LOCAL cluster creations and deployments (what runs keeps running)')
  .requiredOption(...ORGANIZATION_OPTION)
  .option('--json', 'print what changed as JSON')
  .action(async (options: { organization: string; json?: boolean }) =>
    operatorCommand(async () => {
      const { loadConfigOrExit } = await import('../config.ts');
      const { denyOrganization } = await import('./admin-local-clusters.ts');
      return denyOrganization(loadConfigOrExit(), options.organization, options);
    }),
  );
localClusters
  .command('list')
  .description('the allowed organizations, and those holding LOCAL clusters without a grant')
  .option('--json', 'print the lists as JSON')
  .action(async (options: { json?: boolean }) =>
    operatorCommand(async () => {
      const { loadConfigOrExit } = await import('../config.ts');
      const { listGrants } = await import('./admin-local-clusters.ts');
      return listGrants(loadConfigOrExit(), options);
    }),
  );

const io: CliIo = {
  env: process.env,
  out: (text) => process.stdout.write(text),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** Runs a client command; its expected failures end the process with one line and status 1. */
async function clientCommand(run: () => Promise<unknown>): Promise<void> {
  try {
    await run();
  } catch (error) {
    if (error instanceof CliError || error instanceof CredentialsUnreadable) {
      process.stderr.write(`slipway: ${error.message}\n`);
      process.exitCode = 1;
      return;
    }
    throw error;
  }
}

const ENV_REQUIRED_OPTION = ['--env <id|name>', 'the environment, by id or by name'] as const;
const PROJECT_OF_ENV_OPTION = ['--project <id|name>', 'the project of an environment named by name (default: any project of the organization)'] as const;
const SERVER_OPTION = ['--url <url>', 'the Slipway server (default: SLIPWAY_URL, else the last one signed in to, else http://127.0.0.1:8080)'] as const;

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

const JSON_OPTION = ['--json', 'print the API\'s answer as JSON'] as const;
const ORG_OPTION = ['--org <id|name>', 'the organization to act on (default: SLIPWAY_ORGANIZATION, else the one chosen with slipway org use)'] as const;

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

// Deployments (src/cli/services.ts, loaded when one of these commands runs).

const environmentsCommand = program.command('env').description('the environments of a project');

environmentsCommand
  .command('create')
  .description('create an environment in a project (on the organization\'s only cluster unless --cluster names one)')
  .argument('<name>', 'its name (unique within the project)', nonBlank)
  .requiredOption('--project <id|name>', 'the project')
  .option('--mode <mode>', 'PRODUCTION, STAGING, DEVELOPMENT (default) or PREVIEW')
  .option('--cluster <id>', 'the cluster it runs on')
  .option(...ORG_OPTION)
  .option(...SERVER_OPTION)
  .option(...JSON_OPTION)
  .action((name: string, options: OrganizationOptions & { project: string; mode?: string; cluster?: string }) =>
    clientCommand(async () => (await import('./services.ts')).createEnvironment(name, options, io)),
  );

environmentsCommand
  .command('list')
  .description('the environments of a project')
  .requiredOption('--project <id|name>', 'the project')
  .option(...ORG_OPTION)
  .option(...SERVER_OPTION)
  .option(...JSON_OPTION)
  .action((options: OrganizationOptions & { project: string }) => clientCommand(async () => (await import('./services.ts')).listEnvironments(options, io)));

const servicesCommand = program.command('service').description('the services of an environment');

servicesCommand
  .command('create')
  .description('create a service: --settings carries the kind\'s request fields as JSON; the git flags fill in git_repository')
  .argument('<kind>', 'application, container, database, job, helm or terraform')
  .argument('<name>', 'its name (unique within the environment)', nonBlank)
  .requiredOption(...ENV_REQUIRED_OPTION)
  .option(...PROJECT_OF_ENV_OPTION)
  .option(...ORG_OPTION)
  .option('--repository <url>', 'the git repository it is built from')
  .option('--branch <branch>', 'the branch to build (default main)')
  .option('--root-path <path>', 'the directory of the repository to build')
  .option('--git-token <id>', 'the git token that reads a private repository')
  .option('--settings <json>', 'the kind\'s other request fields, as a JSON object')
  .option(...SERVER_OPTION)
  .option(...JSON_OPTION)
  .action((kind: string, name: string, options: EnvironmentOptions & { env: string; repository?: string; branch?: string; rootPath?: string; gitToken?: string; settings?: string }) =>
    clientCommand(async () => (await import('./services.ts')).createService(kind, name, options, io)),
  );

servicesCommand
  .command('list')
  .description('the services of an environment with their states and URLs')
  .requiredOption(...ENV_REQUIRED_OPTION)
  .option(...PROJECT_OF_ENV_OPTION)
  .option(...ORG_OPTION)
  .option(...SERVER_OPTION)
  .option(...JSON_OPTION)
  .action((options: EnvironmentOptions & { env: string }) => clientCommand(async () => (await import('./services.ts')).listServices(options, io)));

const variablesCommand = program.command('var').description('variables and secrets of a project, environment or service');

variablesCommand
  .command('set')
  .description('set a variable at the narrowest scope named; setting a name again replaces it')
  .argument('<key>', 'its name')
  .argument('<value>', 'its value ($NAME makes it an alias of NAME)')
  .option('--project <id|name>', 'on the project (with --env: the project of an environment named by name)')
  .option('--env <id|name>', 'on the environment (with --service: the environment of a service named by name)')
  .option('--service <id|name>', 'on the service')
  .option('--secret', 'a secret: write-only, encrypted at rest')
  .option(...ORG_OPTION)
  .option(...SERVER_OPTION)
  .option(...JSON_OPTION)
  .action((key: string, value: string, options: OrganizationOptions & { project?: string; env?: string; service?: string; secret?: boolean }) =>
    clientCommand(async () => (await import('./services.ts')).setVariable(key, value, options, io)),
  );

const SERVICE_ARGUMENT = ['<service>', 'the service\'s id, or its name with --env'] as const;
const ENV_OPTION = ['--env <id|name>', 'the environment of a service named by name'] as const;

program
  .command('deploy')
  .description('deploy a service with its settings and variables as they are now; the cluster\'s agent carries it out')
  .argument(...SERVICE_ARGUMENT)
  .option(...ENV_OPTION)
  .option(...PROJECT_OF_ENV_OPTION)
  .option(...ORG_OPTION)
  .option('--commit <sha>', 'the git commit to build (default: the branch\'s head)')
  .option('--tag <tag>', 'the image tag to run (containers and jobs)')
  .option(...SERVER_OPTION)
  .option(...JSON_OPTION)
  .action((service: string, options: EnvironmentOptions & { commit?: string; tag?: string }) =>
    clientCommand(async () => (await import('./services.ts')).deployService(service, options, io)),
  );

program
  .command('status')
  .description('where a service stands: its state, and whether what runs is up to date')
  .argument(...SERVICE_ARGUMENT)
  .option(...ENV_OPTION)
  .option(...PROJECT_OF_ENV_OPTION)
  .option(...ORG_OPTION)
  .option(...SERVER_OPTION)
  .option(...JSON_OPTION)
  .action((service: string, options: EnvironmentOptions) =>
    clientCommand(async () => (await import('./services.ts')).serviceStatus(service, options, io)),
  );

program
  .command('logs')
  .description('the log of a service\'s newest deployment (or --deployment); --follow streams it until the deployment settles')
  .argument(...SERVICE_ARGUMENT)
  .option(...ENV_OPTION)
  .option(...PROJECT_OF_ENV_OPTION)
  .option(...ORG_OPTION)
  .option('--deployment <id>', 'another deployment of the service')
  .option('--follow', 'keep printing new lines until the deployment settles')
  .option(...SERVER_OPTION)
  .option(...JSON_OPTION)
  .action((service: string, options: EnvironmentOptions & { deployment?: string; follow?: boolean }) =>
    clientCommand(async () => (await import('./services.ts')).serviceLogs(service, options, io)),
  );

await program.parseAsync(process.argv);
