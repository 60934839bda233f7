import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSystemGitAccess } from '../src/git/system-git.ts';
import { CommandRegistry } from '../src/engine/local/command-registry.ts';
import { createServiceWorkspaces, processesDirOf } from '../src/engine/local/local-driver.workspace.ts';
import { baseEnvironment, ProcessSupervisor } from '../src/engine/local/process-supervisor.ts';
import { WorkloadSandbox } from '../src/engine/local/workload-sandbox.ts';

/**
 * A deleted service leaves nothing under the agent's state directory: its checkouts, file variables and home, and the
 * output files the supervisor wrote for its processes — with real supervised processes writing them.
 */

let stateDir: string;
let supervisor: ProcessSupervisor;

beforeAll(async () => {
  stateDir = await mkdtemp(path.join(tmpdir(), 'slipway-workspace-'));
  supervisor = new ProcessSupervisor({ stateDir: processesDirOf(stateDir), logPollMs: 50 });
});

afterAll(async () => {
  await supervisor.stopAll();
  await rm(stateDir, { recursive: true, force: true });
});

function workspaces() {
  return createServiceWorkspaces({
    stateDir,
    sandbox: new WorkloadSandbox({ isolation: 'none', protectedPaths: [stateDir], identitiesFile: path.join(stateDir, 'identities.json') }),
    cgroups: undefined,
    git: createSystemGitAccess({ allowPrivateHosts: true }),
    commands: new CommandRegistry(path.join(stateDir, 'commands')),
    cancelPollMs: 100,
    trouble: () => undefined,
  });
}

/** A supervised process that prints a line and keeps running; resolves once it runs. */
async function startPrinting(name: string): Promise<void> {
  await supervisor.start({
    name,
    command: [process.execPath, '-e', 'console.log("started"); console.error("on stderr"); setInterval(() => {}, 1000)'],
    cwd: stateDir,
    env: baseEnvironment(),
    settleMs: 200,
  });
}

const filesOfProcesses = (prefix: string): string[] => readdirSync(processesDirOf(stateDir)).filter((file) => file.startsWith(prefix)).sort();

describe('local driver workspace: a service removed from this host', () => {
  it("removes its directories and the output of its ended processes, keeping a live process's and other services'", async () => {
    const serviceId = randomUUID();
    const otherId = randomUUID();
    for (const dir of ['sources', 'files', 'homes']) {
      await mkdir(path.join(stateDir, dir, serviceId, 'task-1'), { recursive: true });
      await writeFile(path.join(stateDir, dir, serviceId, 'task-1', 'file'), 'x');
    }
    for (const name of [`${serviceId}.task-1`, `database-${serviceId}`, `cron-${serviceId}`, `${otherId}.task-1`]) {
      await startPrinting(name);
      await supervisor.stop(name);
    }
    // Still running (its stop failed, or another agent's): its files stay with its pid file.
    await startPrinting(`${serviceId}.task-2`);
    expect(filesOfProcesses(`${serviceId}.`)).toEqual([
      `${serviceId}.task-1.stderr.log`,
      `${serviceId}.task-1.stdout.log`,
      `${serviceId}.task-2.pid.json`,
      `${serviceId}.task-2.stderr.log`,
      `${serviceId}.task-2.stdout.log`,
    ]);

    workspaces().removeWorkspace(serviceId);

    for (const dir of ['sources', 'files', 'homes']) expect(existsSync(path.join(stateDir, dir, serviceId)), dir).toBe(false);
    expect(filesOfProcesses(`${serviceId}.`)).toEqual([`${serviceId}.task-2.pid.json`, `${serviceId}.task-2.stderr.log`, `${serviceId}.task-2.stdout.log`]);
    expect(filesOfProcesses(`database-${serviceId}`)).toEqual([]);
    expect(filesOfProcesses(`cron-${serviceId}`)).toEqual([]);
    expect(filesOfProcesses(otherId)).toEqual([`${otherId}.task-1.stderr.log`, `${otherId}.task-1.stdout.log`]);

    await supervisor.stop(`${serviceId}.task-2`);
    workspaces().removeWorkspace(serviceId);
    expect(filesOfProcesses(`${serviceId}.`)).toEqual([]);
  });
});
