import { Command, InvalidArgumentError } from 'commander';
import { AppError } from '../lib/errors.ts';
import { CredentialsUnreadable } from './credentials.ts';
import { CliError, login, logout, whoami, type CliIo } from './sign-in.ts';

/**
 * The `slipway` command. Server-side commands take their configuration from the same SLIPWAY_* variables as the
 * server and load it (and the server's modules) only when run, so client commands start quickly.
 */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function email(value: string): string {
  if (!EMAIL.test(value)) throw new InvalidArgumentError('not an e-mail address');
  return value;
}

function nonBlank(value: string): string {
  if (value.trim() === '' || value.length > 255) throw new InvalidArgumentError('must be 1 to 255 characters');
  return value;
}

const program = new Command('slipway').description('Slipway deployment platform').showHelpAfterError();

program
  .command('server')
  .description('serve the API (the same as npm start)')
  .action(async () => {
    const { loadConfigOrExit, runServer } = await import('../main.ts');
    await runServer(loadConfigOrExit());
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
      const { loadConfigOrExit } = await import('../main.ts');
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
    const { loadConfigOrExit } = await import('../main.ts');
    const { rotateInstallationSigningKey } = await import('./admin-keys.ts');
    const kid = await rotateInstallationSigningKey(loadConfigOrExit());
    process.stdout.write(`signing key: ${kid}\n`);
  });

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

await program.parseAsync(process.argv);
