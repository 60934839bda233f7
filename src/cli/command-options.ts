import { InvalidArgumentError } from 'commander';
import { CredentialsUnreadable } from './credentials.ts';
import { CliError } from './sign-in.ts';
import { processTerminal, type CommandIo } from './terminal.ts';
import { DEFAULT_TIMEOUT_SECONDS, timeoutSeconds } from './wait.ts';

// What every command file of the CLI shares: argument checks, the process's input and output, and the options.

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function email(value: string): string {
  if (!EMAIL.test(value)) throw new InvalidArgumentError('not an e-mail address');
  return value;
}

export function wholeNumber(low: number, high: number): (value: string) => number {
  return (value) => {
    const count = Number(value);
    if (!/^\d+$/.test(value) || count < low || count > high) throw new InvalidArgumentError(`must be a whole number from ${low} to ${high}`);
    return count;
  };
}

export function nonBlank(value: string): string {
  if (value.trim() === '' || value.length > 255) throw new InvalidArgumentError('must be 1 to 255 characters');
  return value;
}

export const io: CommandIo = {
  env: process.env,
  out: (text) => process.stdout.write(text),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  terminal: processTerminal(),
};

/** Runs a client command; its expected failures end the process with one line and status 1. */
export async function clientCommand(run: () => Promise<unknown>): Promise<void> {
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

export const ENV_REQUIRED_OPTION = ['--env <id|name>', 'the environment, by id or by name'] as const;
export const PROJECT_OF_ENV_OPTION = ['--project <id|name>', 'the project of an environment named by name (default: any project of the organization)'] as const;
export const SERVER_OPTION = ['--url <url>', 'the Slipway server (default: SLIPWAY_URL, else the last one signed in to, else http://127.0.0.1:8080)'] as const;
export const JSON_OPTION = ['--json', 'print the API\'s answer as JSON'] as const;
export const WAIT_OPTION = ['--wait', 'wait until it settles: a progress line on a terminal, then the outcome (status 1 when it ends in an error)'] as const;
export const TIMEOUT_OPTION = ['--timeout <seconds>', `how long --wait waits, in seconds (default ${DEFAULT_TIMEOUT_SECONDS}); implies --wait`, timeoutSeconds] as const;
export const YES_OPTION = ['--yes', 'confirm: nothing brings it back'] as const;
export const ORG_OPTION = ['--org <id|name>', 'the organization to act on (default: SLIPWAY_ORGANIZATION, else the one chosen with slipway org use)'] as const;
