import { Command, InvalidArgumentError } from 'commander';
import { AppError } from '../lib/errors.ts';
import { loadConfigOrExit, runServer } from '../main.ts';
import { bootstrapInstallation } from './admin-bootstrap.ts';

/** The `slipway` command. Configuration comes from the same SLIPWAY_* variables as the server. */
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

await program.parseAsync(process.argv);
