import { spawn } from 'node:child_process';
import type { CommandRegistry } from './command-registry.ts';
import { LineSplitter, LineTail } from './lines.ts';
import { processGroupAlive, sendSignal } from './process-table.ts';

/** A system user to run a command as, when the agent runs as root (database servers refuse root). */
export interface RunAs {
  uid: number;
  gid: number;
}

export type OutputStream = 'stdout' | 'stderr';

export interface CommandOptions {
  /** argv: the executable then its arguments. Never a shell string: a shell is asked for explicitly (`/bin/sh -c`). */
  command: readonly string[];
  cwd: string;
  env: Readonly<Record<string, string>>;
  runAs?: RunAs;
  /** Written to the command's standard input, which is then closed. */
  input?: string;
  /** Past this the command's process group is killed and the result says `timedOut`. */
  timeoutMs?: number;
  /** Aborting kills the command's process group (a canceled deployment). */
  signal?: AbortSignal;
  onLine?: (stream: OutputStream, line: string) => void;
  /** Where the command's process group is written down while it runs, for the next agent to end (command-registry.ts). */
  registry?: CommandRegistry;
}

export interface CommandResult {
  /** Exit code, or null when a signal ended the command. */
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** The last lines of output (both streams), for an error message. */
  tail: string;
}

const KILL_GRACE_MS = 3_000;
const TAIL_LINES = 20;

/**
 * Runs a command to its end in a process group of its own, so a timeout or an abort ends everything it started
 * (`npm ci` spawns helpers), never leaving processes behind.
 */
export function runCommand(options: CommandOptions): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const tail = new LineTail(TAIL_LINES);
    const child = spawn(options.command[0] ?? '', options.command.slice(1), {
      cwd: options.cwd,
      env: { ...options.env },
      detached: true,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      ...(options.runAs === undefined ? {} : { uid: options.runAs.uid, gid: options.runAs.gid }),
    });
    const forget = child.pid === undefined ? undefined : options.registry?.track(child.pid, options.command.join(' ').slice(0, 200));
    const splitters = (['stdout', 'stderr'] as const).map((stream) => {
      const splitter = new LineSplitter((line) => {
        tail.add(line);
        options.onLine?.(stream, line);
      });
      child[stream]?.on('data', (chunk: Buffer) => splitter.push(chunk));
      return splitter;
    });
    if (options.input !== undefined) {
      child.stdin?.on('error', () => undefined);
      child.stdin?.end(options.input);
    }
    let timedOut = false;
    let aborted = false;
    let killTimer: NodeJS.Timeout | undefined;
    const killGroup = (): void => {
      if (child.pid === undefined) return;
      sendSignal(-child.pid, 'SIGTERM');
      killTimer = setTimeout(() => {
        if (child.pid !== undefined) sendSignal(-child.pid, 'SIGKILL');
      }, KILL_GRACE_MS);
    };
    const timeout = options.timeoutMs === undefined ? undefined : setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    const onAbort = (): void => {
      aborted = true;
      killGroup();
    };
    if (options.signal?.aborted === true) onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.once('error', (error) => {
      forget?.();
      clearTimeout(timeout);
      options.signal?.removeEventListener('abort', onAbort);
      reject(new Error(`cannot run ${options.command[0] ?? ''}: ${error.message}`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timeout);
      clearTimeout(killTimer);
      options.signal?.removeEventListener('abort', onAbort);
      for (const splitter of splitters) splitter.flush();
      // What the command left running in its group (a daemonised helper) ends with it.
      if (child.pid !== undefined && processGroupAlive(child.pid)) sendSignal(-child.pid, 'SIGKILL');
      forget?.();
      resolve({ code, signal, timedOut, aborted, tail: tail.text() });
    });
  });
}
