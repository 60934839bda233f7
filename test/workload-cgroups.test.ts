import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { describeLimits, WorkloadCgroups } from '../src/engine/local/workload-cgroups.ts';

// The layouts of hosts other than this one, read from /proc texts given to the class. The v2 case writes into a
// plain directory standing in for a delegated cgroup2 mount (a fake file system, named as one): what is checked is
// which files get which values, which the kernel then enforces (test/local-driver.test.ts runs that for real).
describe('workload control groups: finding the layout', () => {
  const directories: string[] = [];
  afterEach(async () => {
    for (const directory of directories.splice(0)) await rm(directory, { recursive: true, force: true });
  });

  it('says why when no hierarchy with the memory and cpu controllers is mounted, and limits are then sampled', () => {
    const cgroups = new WorkloadCgroups({ selfCgroup: '0::/user.slice\n', mounts: 'proc /proc proc rw 0 0\n' });
    expect(cgroups.version).toBeUndefined();
    expect(cgroups.unavailable).toBe('no cgroup hierarchy with the memory and cpu controllers is mounted');
    expect(cgroups.place('service', { memoryMb: 128 })).toBeUndefined();
    expect(describeLimits({ memoryMb: 128, cpuMillicores: 250 }, undefined, cgroups.unavailable)).toBe(
      'resource limits: memory 128 MB held by sampling the process group every 500 ms; CPU not limited (no writable cgroup on this host: no cgroup hierarchy with the memory and cpu controllers is mounted)',
    );
    expect(describeLimits({}, undefined, cgroups.unavailable)).toBeUndefined();
  });

  it('on cgroup v2, hands the controllers down from its own group and writes memory.max, memory.swap.max and cpu.max', async () => {
    const mount = await mkdtemp(path.join(tmpdir(), 'slipway-cgroup2-'));
    directories.push(mount);
    await writeFile(path.join(mount, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
    const cgroups = new WorkloadCgroups({ selfCgroup: '0::/\n', mounts: `cgroup2 ${mount} cgroup2 rw,nosuid,nodev,noexec 0 0\n` });
    expect(cgroups.unavailable).toBeUndefined();
    expect(cgroups.version).toBe('v2');
    expect(await readFile(path.join(mount, 'cgroup.subtree_control'), 'utf8')).toBe('+memory +cpu');
    expect(await readFile(path.join(mount, 'slipway', 'cgroup.subtree_control'), 'utf8')).toBe('+memory +cpu');

    const group = path.join(mount, 'slipway', 'service-1');
    const placement = cgroups.place('service-1', { memoryMb: 128, cpuMillicores: 250 });
    expect(placement?.procsFiles).toEqual([path.join(group, 'cgroup.procs')]);
    expect(await readFile(path.join(group, 'memory.max'), 'utf8')).toBe(String(128 * 1024 * 1024));
    expect(await readFile(path.join(group, 'cpu.max'), 'utf8')).toBe('25000 100000');
    // Files the kernel did not create (no swap accounting) are left alone.
    expect(existsSync(path.join(group, 'memory.swap.max'))).toBe(false);
    expect(placement?.oomKills()).toBe(0);
    await writeFile(path.join(group, 'memory.events'), 'low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n');
    expect(placement?.oomKills()).toBe(1);
    expect(cgroups.joinArgv(placement as NonNullable<typeof placement>, ['node', 'server.js'])).toEqual([
      '/bin/sh',
      '-c',
      expect.stringContaining('exec "$@"'),
      'sh',
      path.join(group, 'cgroup.procs'),
      '--',
      'node',
      'server.js',
    ]);
    // A limit removed on a later deployment is lifted, not left behind.
    cgroups.place('service-1', { memoryMb: 256 });
    expect(await readFile(path.join(group, 'cpu.max'), 'utf8')).toBe('max 100000');
    // A service without limits gets no group.
    expect(cgroups.place('service-2', {})).toBeUndefined();
    expect(existsSync(path.join(mount, 'slipway', 'service-2'))).toBe(false);
  });

  it("on cgroup v2, says what to do when the agent's own group cannot hand the controllers down", async () => {
    const mount = await mkdtemp(path.join(tmpdir(), 'slipway-cgroup2-'));
    directories.push(mount);
    await writeFile(path.join(mount, 'cgroup.controllers'), 'cpu memory\n');
    // The agent's group does not exist in the stand-in: writing its subtree_control fails, as EBUSY would.
    const cgroups = new WorkloadCgroups({ selfCgroup: '0::/system.slice/slipway.service\n', mounts: `cgroup2 ${mount} cgroup2 rw 0 0\n` });
    expect(cgroups.version).toBeUndefined();
    expect(cgroups.unavailable).toMatch(/cannot hand the memory and cpu controllers down .*Delegate=yes/);
  });
});
