import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import type { Server } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { appsProxyLogPath, type AppsProxyStart, type AppsProxyStarted } from './apps-proxy.protocol.ts';

/**
 * Starting an apps proxy process (apps-proxy.process.ts), by the agent (a first start, or one that died) or by the
 * proxy it succeeds (a handover after an upgrade, handing its listening sockets over): `node bin/slipway.js
 * apps-proxy`, detached, and its start message on the IPC channel of the spawn.
 */

/** A proxy's start: loading the command (the sources, stripped, on a busy machine: seconds) and listening. */
const SPAWN_TIMEOUT_MS = 60_000;

/** `bin/slipway.js` of this installation, from the sources (src/engine/local/) or the bundle (dist/). */
export function slipwayCommandPath(): string {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'bin', 'slipway.js');
    if (existsSync(candidate)) return candidate;
    if (dir === path.dirname(dir)) throw new Error("bin/slipway.js was not found above the agent's code: the apps proxy cannot be started");
  }
}

export interface AppsProxyLaunch {
  /** The Node executable and `bin/slipway.js` to run: the installation whose proxy it is (a new one after an upgrade). */
  execPath: string;
  command: string;
  start: AppsProxyStart;
  /** The listening sockets `start.inherited` names, handed over after the start message. */
  listeners?: ReadonlyMap<string, Server>;
}

/**
 * Spawns the proxy process and resolves with what it says once it listens (or why it cannot); by then the IPC
 * channel is closed and the process is on its own. The program that spawned it may exit: the process has its own
 * session and process group (detached), so a Ctrl-C or a signal to the spawner's group is not its own, and its output
 * goes to its log file rather than to a pipe that would break.
 */
export async function spawnAppsProxy(launch: AppsProxyLaunch): Promise<AppsProxyStarted & { pid: number }> {
  const { start } = launch;
  const log = openSync(appsProxyLogPath(start.stateDir), 'a', 0o600);
  const environment: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  for (const name of ['HOME', 'TMPDIR', 'LANG', 'NODE_COMPILE_CACHE']) {
    const value = process.env[name];
    if (value !== undefined) environment[name] = value;
  }
  // It works from / and learns its state directory from the start message: it is the platform's, not a workload.
  const child = spawn(launch.execPath, [launch.command, 'apps-proxy'], { cwd: '/', env: environment, detached: true, stdio: ['ignore', log, log, 'ipc'] });
  closeSync(log);
  try {
    const started = await new Promise<AppsProxyStarted>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the apps proxy did not listen within ${SPAWN_TIMEOUT_MS / 1000} s`)), SPAWN_TIMEOUT_MS);
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`the apps proxy exited (${signal ?? `code ${String(code)}`}) before listening; see ${appsProxyLogPath(start.stateDir)}`));
      });
      child.on('message', (message: AppsProxyStarted) => {
        if (message.type === 'waiting') {
          child.send(start);
          for (const key of start.inherited) {
            const listener = launch.listeners?.get(key);
            if (listener !== undefined) child.send({ type: 'listener', key }, listener);
          }
          return;
        }
        clearTimeout(timer);
        resolve(message);
      });
    });
    return { ...started, pid: child.pid ?? 0 };
  } catch (error) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    throw error;
  } finally {
    child.removeAllListeners();
    child.on('error', () => undefined);
    if (child.connected) child.disconnect();
    child.unref();
  }
}
