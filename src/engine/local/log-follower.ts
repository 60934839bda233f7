import { closeSync, fstatSync, openSync, readSync, truncateSync } from 'node:fs';
import { LineSplitter } from './lines.ts';

/** The most read from a log file in one poll, so one chatty process cannot stall the others. */
const MAX_READ_BYTES = 1024 * 1024;

/**
 * Follows a log file a supervised process writes to (its stdout or stderr), from a byte offset, emitting whole lines.
 * Workloads write to files rather than to pipes so they outlive the agent: after a restart the new agent follows the
 * same files from the offset the old one saved. When the file outgrows `maxBytes` and everything in it was read, it
 * is truncated in place (the writer appends, so it goes on at the new end); a line written between the last read and
 * the truncation is lost — the price of not copying files.
 */
export class LogFollower {
  private readonly splitter: LineSplitter;

  readonly path: string;
  private position: number;
  private readonly maxBytes: number;
  constructor(
    path: string,
    position: number,
    onLine: (line: string) => void,
    maxBytes: number,
  ) {
    this.path = path;
    this.position = position;
    this.maxBytes = maxBytes;
    this.splitter = new LineSplitter(onLine);
  }

  get offset(): number {
    return this.position;
  }

  /** Reads what was appended since the last call. Returns true when something was read. */
  poll(): boolean {
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch {
      return false;
    }
    try {
      const size = fstatSync(fd).size;
      if (size < this.position) this.position = 0;
      if (size === this.position) {
        this.rotate(size);
        return false;
      }
      const buffer = Buffer.alloc(Math.min(size - this.position, MAX_READ_BYTES));
      const read = readSync(fd, buffer, 0, buffer.length, this.position);
      this.position += read;
      this.splitter.push(buffer.subarray(0, read));
      this.rotate(size);
      return read > 0;
    } finally {
      closeSync(fd);
    }
  }

  /** Reads to the end and hands out a last partial line: the process has ended. */
  finish(): void {
    while (this.poll()) {
      /* read until nothing is left */
    }
    this.splitter.flush();
  }

  private rotate(size: number): void {
    if (this.position < size || size < this.maxBytes) return;
    try {
      truncateSync(this.path, 0);
      this.position = 0;
    } catch {
      /* the file went away: the next poll finds nothing */
    }
  }
}
