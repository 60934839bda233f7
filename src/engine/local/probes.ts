import { execFile } from 'node:child_process';
import { nodeHttp } from '../../lib/node-http.ts';
import { connect } from 'node:net';

/**
 * Readiness checks: how the supervisor knows a workload can take traffic. Each probe answers true or false within
 * its timeout and never throws, so a probe loop needs no error handling of its own.
 */
export type ReadinessCheck =
  /** An HTTP GET answering 200–399 (as Kubernetes' httpGet probe): the application serves requests. */
  | { kind: 'http'; path: string; port?: number; host?: string }
  /** A TCP connection is accepted: something listens on the port. */
  | { kind: 'tcp'; port?: number; host?: string }
  /** A command (argv) run in the workload's directory with its environment exits 0 (as Kubernetes' exec probe). */
  | { kind: 'exec'; command: string[] }
  /** A check of the caller's (a database handshake with credentials); `description` names it in messages. */
  | { kind: 'probe'; description: string; probe: () => Promise<boolean> };

const PROBE_TIMEOUT_MS = 1_000;

export function httpProbe(host: string, port: number, path: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<boolean> {
  return new Promise((resolve) => {
    // agent: false — a probe's connection must not linger in a keep-alive pool and hold the instance's server open.
    const req = nodeHttp.request({ host, port, path, method: 'GET', timeout: timeoutMs, agent: false, headers: { 'user-agent': 'slipway-health-check' } }, (res) => {
      res.resume();
      const status = res.statusCode ?? 0;
      resolve(status >= 200 && status < 400);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(false));
    req.end();
  });
}

export function tcpProbe(host: string, port: number, timeoutMs = PROBE_TIMEOUT_MS): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Sends `request` on a fresh TCP connection and resolves with the bytes received once `complete` says they are
 * enough, or undefined on error, close or timeout. The building block of protocol handshakes (MySQL greeting, RESP).
 */
export function tcpExchange(host: string, port: number, request: Buffer | undefined, complete: (received: Buffer) => boolean, timeoutMs = PROBE_TIMEOUT_MS): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    let received = Buffer.alloc(0);
    let settled = false;
    const done = (value: Buffer | undefined): void => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(value);
    };
    socket.setTimeout(timeoutMs, () => done(undefined));
    socket.once('connect', () => {
      if (request !== undefined) socket.write(request);
    });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (complete(received)) done(received);
    });
    socket.once('error', () => done(undefined));
    socket.once('close', () => done(undefined));
  });
}

/** What an exec check runs in: the workload's directory and environment (PORT included). */
export interface ProbeContext {
  port: number | undefined;
  cwd: string;
  env: Readonly<Record<string, string>>;
  /** Wraps an exec check's argv the way the workload itself is confined (workload-sandbox.ts). */
  confine?: (command: readonly string[]) => string[];
}

/** Runs `command` (argv, no shell); true when it exits 0 within the timeout (a probe that hangs is killed). */
function execProbe(command: readonly string[], context: Omit<ProbeContext, 'port'>, timeoutMs = EXEC_PROBE_TIMEOUT_MS): Promise<boolean> {
  const [file, ...args] = context.confine === undefined || command.length === 0 ? command : context.confine(command);
  if (file === undefined) return Promise.resolve(false);
  return new Promise((resolve) => {
    execFile(file, args, { cwd: context.cwd, env: { ...context.env }, timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 64 * 1024 }, (error) => resolve(error === null));
  });
}

/** An exec probe runs a program, whose start alone takes a while: a longer timeout than a connection's. */
const EXEC_PROBE_TIMEOUT_MS = 10_000;

/** Runs one readiness check against a process listening on its PORT (`context.port`). */
export function runReadinessCheck(check: ReadinessCheck, context: ProbeContext): Promise<boolean> {
  if (check.kind === 'probe') return check.probe().catch(() => false);
  if (check.kind === 'exec') return execProbe(check.command, context);
  const defaultPort = context.port;
  const port = check.port ?? defaultPort;
  if (port === undefined) return Promise.resolve(false);
  const host = check.host ?? '127.0.0.1';
  return check.kind === 'http' ? httpProbe(host, port, check.path) : tcpProbe(host, port);
}

export function describeReadinessCheck(check: ReadinessCheck, defaultPort: number | undefined): string {
  if (check.kind === 'probe') return check.description;
  if (check.kind === 'exec') return `the command ${check.command.join(' ')}`;
  const target = `${check.host ?? '127.0.0.1'}:${check.port ?? defaultPort ?? '?'}`;
  return check.kind === 'http' ? `HTTP GET ${target}${check.path}` : `TCP connect ${target}`;
}
