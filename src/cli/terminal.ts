import { spawn } from 'node:child_process';
import type { CliIo } from './sign-in.ts';

/**
 * What a command may do beyond printing lines: rewrite a progress line in place, and open a browser. Both only
 * where a person is looking — a terminal — so a script or a pipe gets plain lines and never a browser window.
 */
export interface Terminal {
  /** Rewrites the progress line on standard error; undefined when standard error is not a terminal. */
  progress: ((line: string) => void) | undefined;
  /** Whether standard output is a terminal (a person reads it). */
  interactive: boolean;
  /** Opens a URL in the desktop's browser. */
  openInBrowser(url: string): void;
}

export interface CommandIo extends CliIo {
  terminal: Terminal;
}

/** The erase-line sequence: the progress line is redrawn from the start of an emptied line. */
const ERASE_LINE = '\r\u001b[2K';

/** The program that hands a URL to the desktop's browser. */
function browserOpener(url: string): { command: string; args: string[] } {
  if (process.platform === 'darwin') return { command: 'open', args: [url] };
  if (process.platform === 'win32') return { command: 'cmd', args: ['/c', 'start', '""', url] };
  return { command: 'xdg-open', args: [url] };
}

/** The exit status of a command interrupted with Ctrl-C (128 + SIGINT), as shells report it. */
const INTERRUPTED = 130;

export function processTerminal(): Terminal {
  const stderr = process.stderr;
  let drawn = false;
  const progress = (line: string) => {
    // Ctrl-C while a progress line shows: the line is erased, so the shell's prompt does not land after it.
    if (!drawn) {
      drawn = true;
      process.once('SIGINT', () => {
        stderr.write(ERASE_LINE);
        process.exit(INTERRUPTED);
      });
    }
    stderr.write(line === '' ? ERASE_LINE : `${ERASE_LINE}${line}`);
  };
  return {
    progress: stderr.isTTY === true ? progress : undefined,
    interactive: process.stdout.isTTY === true,
    openInBrowser(url) {
      const { command, args } = browserOpener(url);
      // Detached and unwatched: the browser outlives the command, and a missing opener is not the command's failure.
      const child = spawn(command, args, { detached: true, stdio: 'ignore' });
      child.on('error', () => undefined);
      child.unref();
    },
  };
}
