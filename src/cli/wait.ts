import { InvalidArgumentError } from 'commander';
import { CliError } from './sign-in.ts';
import type { CommandIo } from './terminal.ts';

/**
 * `--wait`: an action's request only queues the work (DESIGN.md §7), so waiting is polling the status until it
 * settles. On a terminal a progress line (phase, seconds so far) is rewritten in place; the command then prints one
 * final line, or ends with status 1 and the error's message when the action ended in an error state or the wait
 * timed out.
 */

export interface WaitOptions {
  wait?: boolean | undefined;
  /** Seconds; given alone it implies --wait. */
  timeout?: number | undefined;
}

export const DEFAULT_TIMEOUT_SECONDS = 600;
const POLL_INTERVAL_MS = 1_000;

/** Phases of work in progress, for services, environments and clusters alike (their state machines share names). */
const IN_PROGRESS = new Set([
  'QUEUED',
  'DEPLOYMENT_QUEUED',
  'STOP_QUEUED',
  'RESTART_QUEUED',
  'DELETE_QUEUED',
  'BUILDING',
  'DEPLOYING',
  'STOPPING',
  'RESTARTING',
  'DELETING',
  'CANCELING',
]);

/** Settled phases in which the action did not do what was asked. */
export function isFailedPhase(phase: string): boolean {
  return phase.endsWith('_ERROR') || phase === 'CANCELED' || phase === 'INVALID_CREDENTIALS';
}

export function isSettledPhase(phase: string): boolean {
  return !IN_PROGRESS.has(phase);
}

export function wantsWait(options: WaitOptions): boolean {
  return options.wait === true || options.timeout !== undefined;
}

export function timeoutSeconds(value: string): number {
  const seconds = Number(value);
  if (!/^\d+$/.test(value) || seconds < 1) throw new InvalidArgumentError('must be a whole number of seconds, at least 1');
  return seconds;
}

export interface Settling<Status> {
  /** How the lines name what settles: "application web", "environment staging". */
  subject: string;
  read(): Promise<Status>;
  phaseOf(status: Status): string;
  /** Why it stands where it does (the status message), if the API says. */
  messageOf(status: Status): string | null;
}

export interface Settled<Status> {
  status: Status;
  phase: string;
  seconds: number;
}

/**
 * Polls until the phase settles: resolves with the last status when it settled well, throws a CliError naming the
 * phase and the API's message when it settled in an error, or naming the phase it is still in at the timeout.
 */
export async function waitUntilSettled<Status>(settling: Settling<Status>, options: WaitOptions, io: CommandIo): Promise<Settled<Status>> {
  const limitMs = (options.timeout ?? DEFAULT_TIMEOUT_SECONDS) * 1_000;
  const started = Date.now();
  const { progress } = io.terminal;
  let drawn = false;
  try {
    for (;;) {
      const status = await settling.read();
      const phase = settling.phaseOf(status);
      const elapsedMs = Date.now() - started;
      const seconds = Math.round(elapsedMs / 1_000);
      if (isSettledPhase(phase)) {
        if (!isFailedPhase(phase)) return { status, phase, seconds };
        const message = settling.messageOf(status);
        throw new CliError(`${settling.subject} ended in ${phase}${message === null || message === '' ? '' : `: ${message}`}`);
      }
      if (elapsedMs >= limitMs) {
        throw new CliError(`${settling.subject} is still ${phase} after ${seconds}s; gave up waiting (--timeout ${Math.round(limitMs / 1_000)})`);
      }
      if (progress !== undefined) {
        progress(`${settling.subject}: ${phase} (${seconds}s)`);
        drawn = true;
      }
      await io.sleep(Math.min(POLL_INTERVAL_MS, limitMs - elapsedMs));
    }
  } finally {
    if (drawn) progress?.('');
  }
}

/** The final line of a wait that settled well. */
export function settledLine(subject: string, settled: Settled<unknown>): string {
  return `${subject}: ${settled.phase} after ${settled.seconds}s\n`;
}
