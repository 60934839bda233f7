import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { carryOutTask } from '../src/agent/agent.runtime.ts';
import { createLocalDriver, type LocalDriver } from '../src/engine/local/local-driver.ts';
import { LocalReverseProxy } from '../src/engine/local/reverse-proxy.ts';
import { WorkloadSandbox } from '../src/engine/local/workload-sandbox.ts';
import { createSystemGitAccess } from '../src/git/system-git.ts';
import type { AgentTask } from '../src/protocol/agent-protocol.ts';
import { startGitServer, type TestGitServer } from './support/git-server.ts';
import { agentTask, TaskSessionHarness } from './support/task-session.ts';

/**
 * A lifecycle job's on_delete on the local driver: the command runs from the job's checkout when its service is torn
 * down, with the last deployment's variables (secrets included) when the control plane still serves its spec, else
 * the non-secret ones; a command that fails is told in the teardown's log and the service is removed all the same.
 * Real parts: a git server with the job's repository, the commands run as real processes (no confinement: the
 * commands are the test's own). Tasks come through TaskSessionHarness, where the agent runtime's session stands.
 */

const SECRET = 'on-delete-s3cr3t';
const environmentId = randomUUID();

let root: string;
let stateDir: string;
let gitServer: TestGitServer;
let proxy: LocalReverseProxy;
let driver: LocalDriver;
let commitId = '';

function runGit(args: string[], cwd: string): Promise<string> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, LC_ALL: 'C', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 't@example.com' };
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, env }, (error, stdout, stderr) => (error === null ? resolve(stdout.trim()) : reject(new Error(`git ${args.join(' ')}: ${stderr}`))));
  });
}

function jobSpec(serviceId: string, onDelete: string): Record<string, unknown> {
  const schedule = { kind: 'LIFECYCLE', lifecycle_type: 'GENERIC', on_start: null, on_stop: null, on_delete: { entrypoint: 'sh', arguments: ['-c', onDelete] } };
  const settings = { memory: 512, max_duration_seconds: 60, source: { kind: 'docker', git_repository: {} }, schedule };
  return {
    service: { id: serviceId, kind: 'JOB', name: 'cleanup', organizationId: randomUUID(), environmentId, clusterId: randomUUID(), settings },
    git_commit_id: commitId,
    image_tag: null,
    variables: [
      { key: 'GREETING', value: SECRET, mount_path: null, scope: 'ENVIRONMENT', secret: true },
      { key: 'PLAIN', value: 'plain-value', mount_path: null, scope: 'SERVICE', secret: false },
    ],
    environment: { id: environmentId, name: 'prod', mode: 'PRODUCTION', project_id: randomUUID() },
    image: null,
    git: { url: gitServer.urlOf('jobs'), branch: 'main', commit_id: commitId, root_path: '/', credentials: null },
    database: null,
    routing: { hostnames: [], internal: null, peers: [] },
  };
}

async function perform(serviceId: string, action: string, subject: AgentTask['subject_type'], spec: Record<string, unknown> | undefined): Promise<TaskSessionHarness> {
  const session = new TaskSessionHarness(agentTask(environmentId, serviceId, action, 'JOB', subject), spec);
  await carryOutTask(driver, session, (event, message) => session.report(event, message));
  return session;
}

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'slipway-on-delete-'));
  stateDir = path.join(root, 'agent');
  await mkdir(stateDir);
  const reposDir = path.join(root, 'repos');
  await mkdir(reposDir);
  const work = path.join(root, 'work');
  await mkdir(work);
  await runGit(['init', '--quiet', '--initial-branch=main', work], work);
  await writeFile(path.join(work, 'farewell.txt'), 'goodbye from the checkout\n');
  await runGit(['add', '--all'], work);
  await runGit(['commit', '--quiet', '-m', 'jobs'], work);
  commitId = await runGit(['rev-parse', 'HEAD'], work);
  await runGit(['clone', '--quiet', '--bare', work, path.join(reposDir, 'jobs.git')], reposDir);
  gitServer = await startGitServer({ root: reposDir, privateRepositories: {} });
  proxy = new LocalReverseProxy({ drainTimeoutMs: 1_000 });
  await proxy.listen(0);
  driver = createLocalDriver({
    stateDir,
    sandbox: new WorkloadSandbox({ isolation: 'none', protectedPaths: [], identitiesFile: path.join(stateDir, 'identities.json') }),
    proxy,
    git: createSystemGitAccess({ allowPrivateHosts: true }),
    workloadLogs: async () => undefined,
  });
});

afterAll(async () => {
  await driver?.stopAll();
  await proxy?.close();
  await gitServer?.close();
  await rm(root, { recursive: true, force: true });
});

describe('local driver: a lifecycle job’s on_delete', () => {
  it('runs when the service is torn down, with the last deployment’s variables while its spec is served', async () => {
    const serviceId = randomUUID();
    const spec = jobSpec(serviceId, 'cat farewell.txt; echo "deleting with $PLAIN and [$GREETING]"');
    const deployed = await perform(serviceId, 'deploy', 'SERVICE', spec);
    expect(deployed.events(), deployed.text()).toEqual(['take', 'built', 'succeed']);

    const torn = await perform(serviceId, 'delete', 'SERVICE_TEARDOWN', spec);
    expect(torn.events(), torn.text()).toEqual(['take', 'succeed']);
    expect(torn.text()).toContain('goodbye from the checkout');
    expect(torn.text()).toContain(`deleting with plain-value and [${SECRET}]`);
    expect(torn.text()).toContain('on_delete exited with code 0');
    expect(existsSync(path.join(stateDir, 'sources', serviceId))).toBe(false);
  });

  it('runs with the non-secret variables when no spec is served any more', async () => {
    const serviceId = randomUUID();
    const deployed = await perform(serviceId, 'deploy', 'SERVICE', jobSpec(serviceId, 'echo "deleting with $PLAIN and [$GREETING]"'));
    expect(deployed.events(), deployed.text()).toEqual(['take', 'built', 'succeed']);

    const torn = await perform(serviceId, 'delete', 'SERVICE_TEARDOWN', undefined);
    expect(torn.events(), torn.text()).toEqual(['take', 'succeed']);
    expect(torn.text()).toContain('deleting with plain-value and []');
  });

  it('tells a failed on_delete and removes the service all the same', async () => {
    const serviceId = randomUUID();
    const spec = jobSpec(serviceId, 'echo "cannot clean up"; exit 7');
    const deployed = await perform(serviceId, 'deploy', 'SERVICE', spec);
    expect(deployed.events(), deployed.text()).toEqual(['take', 'built', 'succeed']);

    const torn = await perform(serviceId, 'delete', 'SERVICE_TEARDOWN', spec);
    expect(torn.events(), torn.text()).toEqual(['take', 'succeed']);
    expect(torn.text()).toContain('cannot clean up');
    expect(torn.text()).toContain('on_delete exited with code 7');
    expect(torn.text()).toMatch(/on_delete \(sh -c .*\) exited with code 7: the service is removed all the same/);
    expect(torn.text()).toContain('cleanup was removed from this host');
    expect(existsSync(path.join(stateDir, 'sources', serviceId))).toBe(false);
  });
});
