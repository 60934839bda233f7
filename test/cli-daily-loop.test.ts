import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDotenv } from '../src/cli/dotenv.ts';
import { TEST_DIALECTS } from './support/databases.ts';
import type { TestGitServer } from './support/git-server.ts';
import { createSampleRepository, requestThroughProxy } from './support/sample-apps.ts';
import { runSlipway, SLIPWAY_BIN, type CliResult, type SlipwayServer } from './support/slipway-process.ts';
import { startBootstrappedWorld } from './support/local-engine-world.ts';

/**
 * Issue 21 part 3, "a CLI for the daily loop", with the real `slipway` executable as child processes against a real
 * `slipway server` whose in-process agent deploys for real on its LOCAL cluster (the `hello` sample from a git server
 * on 127.0.0.1): clusters, environment and service actions with --wait (success, an error state, a timeout, the
 * progress line on a terminal), deployment history, `service open`, variables listed with their provenance, unset
 * and imported from a .env file, --version and shell completion. Everything is named by name.
 */

const STEP_TIMEOUT_MS = 300_000;
const SECRET = 'never-printed-secret-value';

describe('.env parsing', () => {
  it('reads comments, export prefixes, quotes, escapes and multi-line values as dotenv does', () => {
    const text = [
      '# a comment',
      '',
      'PLAIN=value',
      'export EXPORTED = spaced value   ',
      'WITH_COMMENT=kept # dropped',
      'COLOR=#fff',
      'URL=https://example.com/a#fragment',
      'EMPTY=',
      'SINGLE=\'a "literal" \\n $X\'',
      'DOUBLE="line one\\nline two\\t\\"quoted\\" \\\\ \\$HOME \\q" # comment after',
      'MULTI="first',
      'second"',
      'BACKTICK=`it\'s "fine"`',
      'ALIAS=$PLAIN',
      'PLAIN=last wins',
    ].join('\r\n');
    expect(parseDotenv(text, '.env')).toEqual([
      { key: 'EXPORTED', value: 'spaced value', line: 4 },
      { key: 'WITH_COMMENT', value: 'kept', line: 5 },
      { key: 'COLOR', value: '#fff', line: 6 },
      { key: 'URL', value: 'https://example.com/a#fragment', line: 7 },
      { key: 'EMPTY', value: '', line: 8 },
      { key: 'SINGLE', value: 'a "literal" \\n $X', line: 9 },
      { key: 'DOUBLE', value: 'line one\nline two\t"quoted" \\ $HOME \\q', line: 10 },
      { key: 'MULTI', value: 'first\nsecond', line: 11 },
      { key: 'BACKTICK', value: 'it\'s "fine"', line: 13 },
      { key: 'ALIAS', value: '$PLAIN', line: 14 },
      { key: 'PLAIN', value: 'last wins', line: 15 },
    ]);
  });

  it('refuses what it does not understand, naming the line', () => {
    expect(() => parseDotenv('A=1\nnot an assignment\n', 'app.env')).toThrow('app.env, line 2: expected KEY=value');
    expect(() => parseDotenv('my.key=1\n', 'app.env')).toThrow('app.env, line 1: "my.key" is not a variable name');
    expect(() => parseDotenv('A=1\nB="never\nclosed\n', 'app.env')).toThrow('app.env, line 2: the value of B opens a " quote that is never closed');
    expect(() => parseDotenv('A="x" y\n', 'app.env')).toThrow('app.env, line 1: unexpected text after the quoted value of A: y');
  });
});

for (const dialect of TEST_DIALECTS) {
  describe(`slipway CLI, the daily loop [${dialect}]`, () => {
    let server: (SlipwayServer & { organizationId: string; apiToken: string }) | undefined;
    let gitServer: TestGitServer | undefined;
    let home = '';
    let appsPort = 0;
    let world: Awaited<ReturnType<typeof startBootstrappedWorld>> | undefined;

    beforeAll(async () => {
      home = await mkdtemp(path.join(tmpdir(), 'slipway-cli-loop-home-'));
      world = await startBootstrappedWorld(dialect, { name: 'cli-loop', repositories: async (root) => void (await createSampleRepository(root, 'hello', 'hello')) });
      ({ server, gitServer, appsPort } = world);
    }, 240_000);

    afterAll(async () => {
      await world?.close();
      await rm(home, { recursive: true, force: true });
    }, 60_000);

    function env(): Record<string, string> {
      if (server === undefined) throw new Error('the server did not start');
      return { HOME: home, XDG_CONFIG_HOME: home, SLIPWAY_URL: server.baseUrl, SLIPWAY_TOKEN: server.apiToken, SLIPWAY_ORGANIZATION: server.organizationId };
    }

    async function succeeds(args: string[]): Promise<string> {
      const result = await runSlipway(args, env());
      expect(result.stderr, `slipway ${args.join(' ')}`).toBe('');
      expect(result.code, `slipway ${args.join(' ')}: ${result.stdout}`).toBe(0);
      return result.stdout;
    }

    async function json<T>(args: string[]): Promise<T> {
      return JSON.parse(await succeeds([...args, '--json'])) as T;
    }

    /** A command that fails: status 1 and one `slipway: …` line on standard error; `stdout` is what it printed before. */
    async function fails(args: string[]): Promise<CliResult> {
      const result = await runSlipway(args, env());
      expect(result.code, `slipway ${args.join(' ')}: ${result.stdout}${result.stderr}`).toBe(1);
      expect(result.stderr).toMatch(/^slipway: [^\n]+\n$/);
      expect(result.stderr).not.toMatch(/\n\s+at /);
      return result;
    }

    /** Runs the command on a pseudo-terminal (script(1)): what a person at a terminal sees, both streams in one. */
    function startOnTerminal(args: string[], extraEnv: Record<string, string> = {}) {
      const command = [process.execPath, SLIPWAY_BIN, ...args].map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(' ');
      const child = spawn('script', ['-qefc', command, '/dev/null'], { env: { PATH: process.env.PATH, TERM: 'dumb', ...env(), ...extraEnv } });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const result = new Promise<{ code: number | null; output: string }>((resolve, reject) => {
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, output }));
      });
      /** Types on the terminal's keyboard (Ctrl-C is \u0003). */
      const type = (keys: string) => child.stdin.write(keys);
      return { printed: () => output, type, result };
    }

    function onTerminal(args: string[], extraEnv: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
      return startOnTerminal(args, extraEnv).result;
    }

    it('creates clusters by name, deploys one with --wait, and fails the command when a deploy ends in an error', { timeout: STEP_TIMEOUT_MS }, async () => {
      expect(await succeeds(['cluster', 'list'])).toBe('No clusters. Create one with slipway cluster create <name>.\n');
      expect(await succeeds(['cluster', 'create', 'local'])).toMatch(/^Created LOCAL cluster local \([0-9a-f-]{36}\), READY\. Deploy it with: slipway cluster deploy local\n$/);
      expect(await succeeds(['cluster', 'status', 'LOCAL'])).toMatch(/^cluster local: READY\ndeployed: never\n$/);
      expect(await succeeds(['cluster', 'deploy', 'local', '--wait'])).toMatch(/^cluster local: DEPLOYED after \d+s\n$/);
      expect(await succeeds(['cluster', 'status', 'local'])).toMatch(/^cluster local: DEPLOYED\ndeployed: yes, last on \S+\n$/);

      await succeeds(['cluster', 'create', 'eks', '--kind', 'managed', '--provider', 'aws', '--region', 'eu-west-3']);
      const failed = await fails(['cluster', 'deploy', 'eks', '--wait', '--timeout', '120']);
      expect(failed.stderr).toMatch(/^slipway: cluster eks ended in DEPLOYMENT_ERROR: no cloud provisioner is configured for AWS managed clusters/);

      const listed = await json<{ results: Array<{ name: string; kubernetes: string; status: string }> }>(['cluster', 'list']);
      expect(listed.results.map(({ name, kubernetes, status }) => ({ name, kubernetes, status })).sort((a, b) => a.name.localeCompare(b.name))).toEqual([
        { name: 'eks', kubernetes: 'MANAGED', status: 'DEPLOYMENT_ERROR' },
        { name: 'local', kubernetes: 'LOCAL', status: 'DEPLOYED' },
      ]);
      const table = (await succeeds(['cluster', 'list'])).trimEnd().split('\n');
      expect(table[0]).toMatch(/^ID +NAME +KIND +PROVIDER +REGION +STATUS +DEPLOYMENT$/);
      expect(table.find((line) => line.includes(' local '))).toMatch(/ LOCAL +ON_PREMISE +local +DEPLOYED +UP_TO_DATE$/);
      expect((await succeeds(['cluster', 'status'])).split('\n')[0]).toMatch(/^ID +NAME +STATUS$/);
      expect((await fails(['cluster', 'deploy', 'nowhere'])).stderr).toMatch(/^slipway: the organization has no cluster named "nowhere"; there are: (local, eks|eks, local)\n$/);
    });

    it('deploys, restarts, redeploys and stops a service with --wait, opens it and shows its history', { timeout: STEP_TIMEOUT_MS }, async () => {
      if (gitServer === undefined) throw new Error('the git server did not start');
      await succeeds(['projects', 'create', 'shop']);
      // Two clusters now: the environment names one, by name.
      expect(await succeeds(['env', 'create', 'staging', '--project', 'shop', '--mode', 'staging', '--cluster', 'local'])).toMatch(/^Created environment staging .*, STAGING, on cluster /);
      const settings = {
        ports: [{ internal_port: 8080, publicly_accessible: true, protocol: 'HTTP' }],
        healthchecks: { readiness_probe: { type: { http: { path: '/health' } }, initial_delay_seconds: 0, period_seconds: 2, timeout_seconds: 1, failure_threshold: 30 } },
      };
      await succeeds(['service', 'create', 'application', 'web', '--env', 'staging', '--repository', gitServer.urlOf('hello'), '--settings', JSON.stringify(settings)]);
      await succeeds(['var', 'set', 'GREETING', 'hello from the daily loop', '--service', 'web', '--env', 'staging']);

      const deployed = await succeeds(['deploy', 'web', '--env', 'staging', '--wait']);
      expect(deployed).toMatch(/^Deployment [0-9a-f-]{36} of application web: QUEUED\ndeploy queued: waiting for the cluster's agent to take it\nVariables snapshot [0-9a-f]{12}: \d+ variables \(\d+ sealed\)\napplication web: DEPLOYED after \d+s\n$/);

      const url = (await succeeds(['service', 'open', 'web', '--env', 'staging'])).trimEnd();
      expect(url).toMatch(new RegExp(`^http://web-staging-[a-z2-7]{8}\\.localhost:${appsPort}$`));
      // The desktop's opener, as the command finds it on PATH: this one notes each URL it is handed.
      const bin = path.join(home, 'bin');
      const opened = path.join(home, 'opened.txt');
      await mkdir(bin, { recursive: true });
      await writeFile(path.join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s\\n' "$1" >> '${opened}'\n`, { mode: 0o755 });
      const withOpener = { PATH: `${bin}:${process.env.PATH ?? ''}` };
      // Without a terminal, --browser prints the same URL and opens nothing; on one, it opens it too.
      const piped = await runSlipway(['service', 'open', 'web', '--env', 'staging', '--browser'], { ...env(), ...withOpener });
      expect(piped).toEqual({ code: 0, stdout: `${url}\n`, stderr: '' });
      const onTty = await onTerminal(['service', 'open', 'web', '--env', 'staging', '--browser'], withOpener);
      expect(onTty.code).toBe(0);
      expect(onTty.output).toContain(`${url}\r\n`);
      await expect.poll(() => readFile(opened, 'utf8').catch(() => ''), { timeout: 10_000 }).toBe(`${url}\n`);
      const answer = await requestThroughProxy(appsPort, new URL(url).hostname);
      expect(answer.status, answer.body).toBe(200);
      expect(JSON.parse(answer.body)).toMatchObject({ greeting: 'hello from the daily loop' });

      expect(await succeeds(['service', 'restart', 'web', '--env', 'staging', '--wait'])).toMatch(/^application web: RESTARTED after \d+s\n$/);
      const redeployed = await json<{ state: string; service_deployment_status: string }>(['service', 'redeploy', 'web', '--env', 'staging', '--wait']);
      expect(redeployed).toMatchObject({ state: 'DEPLOYED', service_deployment_status: 'UP_TO_DATE' });

      const history = await json<{ results: Array<{ status: string; status_details: { action: string } }> }>(['history', 'web', '--env', 'staging']);
      expect(history.results.map((entry) => [entry.status_details.action, entry.status])).toEqual([
        ['DEPLOY', 'DEPLOYED'],
        ['RESTART', 'RESTARTED'],
        ['DEPLOY', 'DEPLOYED'],
      ]);
      const historyTable = (await succeeds(['history', 'web', '--env', 'staging', '--limit', '2'])).trimEnd().split('\n');
      expect(historyTable[0]).toMatch(/^DEPLOYMENT +CREATED +ACTION +STATE +VERSION +DURATION +BY +MESSAGE$/);
      expect(historyTable.slice(1, 3)).toEqual([
        expect.stringMatching(/^[0-9a-f-]{36} +\S+ +DEPLOY +DEPLOYED +(?:[0-9a-f]{12}|-) +PT\S+ +token:bootstrap \([A-Z]+\)$/),
        expect.stringMatching(/^[0-9a-f-]{36} +\S+ +RESTART +RESTARTED +/),
      ]);
      expect(historyTable[3]).toBe('(the 2 newest; --limit shows up to 100)');

      expect(await succeeds(['service', 'stop', 'web', '--env', 'staging', '--wait'])).toMatch(/^application web: STOPPED after \d+s\n$/);
      expect((await fails(['service', 'stop', 'web', '--env', 'staging'])).stderr).toBe('slipway: cannot stop service: it is STOPPED\n');
    });

    it('deploys, restarts and stops an environment with --wait, and clones and deletes environments by name', { timeout: STEP_TIMEOUT_MS }, async () => {
      expect(await succeeds(['env', 'deploy', 'staging', '--project', 'shop', '--wait'])).toMatch(/^environment staging: DEPLOYED after \d+s\n$/);
      expect(await succeeds(['status', 'web', '--env', 'staging'])).toMatch(/^application web: DEPLOYED, UP_TO_DATE/);
      expect(await succeeds(['env', 'restart', 'staging', '--wait'])).toMatch(/^environment staging: RESTARTED after \d+s\n$/);
      expect(await succeeds(['env', 'status', 'staging'])).toMatch(/^environment staging: RESTARTED, UP_TO_DATE\n$/);
      const stopped = await json<{ state: string }>(['env', 'stop', 'staging', '--wait']);
      expect(stopped.state).toBe('STOPPED');
      expect(await succeeds(['status', 'web', '--env', 'staging'])).toMatch(/^application web: STOPPED/);

      await succeeds(['var', 'set', 'REGION', 'eu', '--env', 'staging']);
      const clone = await json<{ id: string; name: string; mode: string }>(['env', 'clone', 'staging', 'preview', '--mode', 'preview', '--with-variables']);
      expect(clone).toMatchObject({ name: 'preview', mode: 'PREVIEW' });
      const environments = (await succeeds(['env', 'list', '--project', 'shop'])).trimEnd().split('\n');
      expect(environments[0]).toMatch(/^ID +NAME +MODE +CLUSTER +STATE +DEPLOYMENT$/);
      expect(environments.find((line) => line.startsWith(clone.id))).toMatch(/ preview +PREVIEW +local +READY +NEVER_DEPLOYED$/);
      expect(await succeeds(['var', 'list', '--env', 'preview'])).toMatch(/\nREGION +eu +ENVIRONMENT +VALUE/);

      expect((await fails(['env', 'delete', 'preview'])).stderr).toBe(
        'slipway: deleting environment preview removes it with all its services, variables and history, and stops what runs; run again with --yes\n',
      );
      expect(await succeeds(['env', 'delete', 'preview', '--yes'])).toBe(`Deleted environment preview (${clone.id}).\n`);
      expect((await fails(['env', 'status', 'preview'])).stderr).toBe('slipway: the organization has no environment named "preview"; there are: staging (project shop)\n');
    });

    it('ends --wait with status 1 and the error when a deploy fails, gives up at --timeout, shows progress on a terminal and erases it on Ctrl-C', { timeout: STEP_TIMEOUT_MS }, async () => {
      if (gitServer === undefined) throw new Error('the git server did not start');
      await succeeds(['service', 'create', 'application', 'broken', '--env', 'staging', '--repository', gitServer.urlOf('missing')]);
      const failed = await fails(['deploy', 'broken', '--env', 'staging', '--wait']);
      expect(failed.stdout).toMatch(/^Deployment [0-9a-f-]{36} of application broken: QUEUED\n/);
      expect(failed.stderr).toMatch(/^slipway: application broken ended in BUILD_ERROR: \S/);

      // A cluster no agent serves: what is deployed onto it stays QUEUED.
      await succeeds(['env', 'create', 'remote', '--project', 'shop', '--cluster', 'eks']);
      await succeeds(['service', 'create', 'application', 'far', '--env', 'remote', '--repository', gitServer.urlOf('hello')]);
      const started = Date.now();
      const timedOut = await fails(['deploy', 'far', '--env', 'remote', '--timeout', '2', '--json']);
      expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
      // Not on a terminal: no progress line, only the error.
      expect(timedOut.stdout).toBe('');
      expect(timedOut.stderr).toMatch(/^slipway: application far is still QUEUED after \d+s; gave up waiting \(--timeout 2\)\n$/);

      // On a terminal the phase and the seconds so far are rewritten in place, then erased before the last line.
      const watched = await onTerminal(['env', 'deploy', 'remote', '--project', 'shop', '--timeout', '2']);
      expect(watched.code).toBe(1);
      const drawn = watched.output.trimEnd().split('\r\u001b[2K').slice(1);
      const progress = drawn.slice(0, -1);
      expect(progress[0]).toBe('environment remote: QUEUED (0s)');
      expect(progress.length).toBeGreaterThanOrEqual(2);
      const seconds = progress.map((line) => Number(/^environment remote: QUEUED \((\d+)s\)$/.exec(line)?.[1]));
      expect(seconds).toEqual([...seconds].sort((a, b) => a - b));
      // The progress line is erased, and the error takes its place.
      expect(drawn.slice(-1)).toEqual([expect.stringMatching(/^slipway: environment remote is still QUEUED after \d+s; gave up waiting \(--timeout 2\)$/)]);

      // Ctrl-C while it waits: the progress line is erased, and the command ends as interrupted (130).
      await succeeds(['service', 'create', 'application', 'farther', '--env', 'remote', '--repository', gitServer.urlOf('hello')]);
      const interrupted = startOnTerminal(['deploy', 'farther', '--env', 'remote', '--wait']);
      await expect.poll(() => interrupted.printed(), { timeout: 60_000 }).toContain('application farther: QUEUED (');
      interrupted.type('\u0003');
      const ended = await interrupted.result;
      expect(ended.code).toBe(130);
      const redrawn = ended.output.split('\r\u001b[2K');
      expect(redrawn.at(-1)).toBe('');
      expect(redrawn.at(-2)).toMatch(/^application farther: QUEUED \(\d+s\)(?:\^C)?$/);

      expect((await fails(['service', 'delete', 'broken', '--env', 'staging'])).stderr).toMatch(/run again with --yes\n$/);
      expect(await succeeds(['service', 'delete', 'broken', '--env', 'staging', '--yes'])).toMatch(/^Deleted application broken \([0-9a-f-]{36}\)\.\n$/);
      expect((await fails(['service', 'open', 'far', '--env', 'remote'])).stderr).toBe('slipway: application far has no URL: none of its ports is publicly accessible\n');
      expect((await fails(['history', 'nothing', '--env', 'staging'])).stderr).toBe('slipway: environment staging has no service named "nothing"\n');
    });

    it('lists variables with their scope and provenance, secrets masked; unsets them; imports a .env file', { timeout: STEP_TIMEOUT_MS }, async () => {
      await succeeds(['projects', 'create', 'vars']);
      await succeeds(['env', 'create', 'dev', '--project', 'vars', '--cluster', 'local']);
      await succeeds(['service', 'create', 'application', 'api', '--env', 'dev', '--project', 'vars', '--repository', 'https://github.com/acme/api']);
      const scope = ['--service', 'api', '--env', 'dev', '--project', 'vars'];

      // A git token by name, like everything else.
      if (server === undefined) throw new Error('the server did not start');
      const tokenCreated = await fetch(`${server.baseUrl}/organization/${server.organizationId}/gitToken`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.apiToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'CI token', type: 'GITHUB', token: 'ghp_exampleTokenValue123' }),
      });
      expect(tokenCreated.status).toBe(201);
      const gitToken = (await tokenCreated.json()) as { id: string };
      const withToken = ['service', 'create', 'application', 'private', '--env', 'dev', '--project', 'vars', '--repository', 'https://github.com/acme/private'];
      const privateApplication = await json<{ git_repository: { git_token_id: string | null } }>([...withToken, '--git-token', 'ci TOKEN']);
      expect(privateApplication.git_repository.git_token_id).toBe(gitToken.id);
      expect((await fails([...withToken, '--git-token', 'nope'])).stderr).toBe('slipway: the organization has no git token named "nope"; there are: CI token\n');

      await succeeds(['var', 'set', 'GREETING', 'from-project', '--project', 'vars']);
      await succeeds(['var', 'set', 'ZONE', 'a', '--env', 'dev', '--project', 'vars']);
      await succeeds(['var', 'set', 'GREETING', 'from-api', ...scope]);
      await succeeds(['var', 'set', 'WHERE', '$ZONE', ...scope]);
      expect(await succeeds(['var', 'set', 'TOKEN', SECRET, ...scope, '--secret'])).toBe('Set secret TOKEN on application api (APPLICATION).\n');

      interface Listed {
        key: string;
        value?: string;
        scope: string;
        variable_type: string;
        secret: boolean;
        shadowed_by: string | null;
        aliased_variable?: { key: string; scope: string };
      }
      const listed = (await json<{ results: Listed[] }>(['var', 'list', ...scope])).results;
      const rows = (key: string) => listed.filter((row) => row.key === key).map(({ scope: where, value, secret, shadowed_by }) => ({ scope: where, value, secret, shadowed_by }));
      expect(rows('GREETING')).toEqual([
        { scope: 'PROJECT', value: 'from-project', secret: false, shadowed_by: 'APPLICATION' },
        { scope: 'APPLICATION', value: 'from-api', secret: false, shadowed_by: null },
      ]);
      expect(rows('TOKEN')).toEqual([{ scope: 'APPLICATION', value: undefined, secret: true, shadowed_by: null }]);
      expect(listed.find((row) => row.key === 'WHERE')).toMatchObject({ variable_type: 'ALIAS', aliased_variable: { key: 'ZONE', scope: 'ENVIRONMENT' } });
      expect(listed.find((row) => row.key === 'PLATFORM_APPLICATION_API_HOSTNAME')).toMatchObject({ scope: 'BUILT_IN', variable_type: 'BUILT_IN' });
      expect(listed.find((row) => row.key === 'PLATFORM_APPLICATION_API_HOSTNAME')).not.toHaveProperty('value');

      const table = await succeeds(['var', 'list', ...scope]);
      expect(table).not.toContain(SECRET);
      const lines = table.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^KEY +VALUE +SCOPE +TYPE +PROVENANCE$/);
      expect(lines).toContainEqual(expect.stringMatching(/^GREETING +from-project +PROJECT +VALUE +shadowed by APPLICATION$/));
      expect(lines).toContainEqual(expect.stringMatching(/^GREETING +from-api +APPLICATION +VALUE$/));
      expect(lines).toContainEqual(expect.stringMatching(/^TOKEN +\*{8} +APPLICATION +SECRET$/));
      expect(lines).toContainEqual(expect.stringMatching(/^WHERE +\$ZONE +APPLICATION +ALIAS +alias of ZONE \(ENVIRONMENT\)$/));
      expect(lines).toContainEqual(expect.stringMatching(/^PLATFORM_APPLICATION_API_HOSTNAME +\*{8} \(hidden\) +BUILT_IN +BUILT_IN +of application api$/));
      // Revealed for a caller who may (the bootstrap's ADMIN token): the hidden built-in's value; secrets never.
      const revealed = await succeeds(['var', 'list', ...scope, '--reveal']);
      expect(revealed).toMatch(/\nPLATFORM_APPLICATION_API_HOSTNAME +[a-z0-9.-]+ +BUILT_IN +BUILT_IN +of application api\n/);
      expect(revealed).toMatch(/\nTOKEN +\*{8} +APPLICATION +SECRET\n/);
      expect(await succeeds(['var', 'list', '--project', 'vars'])).toMatch(/^KEY +VALUE +SCOPE +TYPE +PROVENANCE\nGREETING +from-project +PROJECT +VALUE\n$/);

      expect(await succeeds(['var', 'unset', 'GREETING', ...scope])).toBe('Unset variable GREETING on application api (APPLICATION). GREETING now comes from PROJECT.\n');
      expect(await succeeds(['var', 'unset', 'TOKEN', ...scope])).toBe('Unset secret TOKEN on application api (APPLICATION).\n');
      expect((await fails(['var', 'unset', 'ZONE', ...scope])).stderr).toBe('slipway: ZONE is not set on application api: it comes from ENVIRONMENT; unset it there\n');
      expect((await fails(['var', 'unset', 'NOTHING', '--env', 'dev'])).stderr).toBe('slipway: environment dev has no variable or secret named NOTHING\n');

      const dotenv = path.join(home, 'dev.env');
      await writeFile(
        dotenv,
        [
          '# the development settings',
          'export DATABASE_POOL=5',
          'ZONE=b   # moved',
          'MOTD="Welcome!\\nLine two with \\"quotes\\""',
          "PEM='-----BEGIN KEY-----",
          'abc',
          "-----END KEY-----'",
          'EMPTY=',
          '',
        ].join('\n'),
      );
      const imported = await succeeds(['var', 'import', dotenv, '--env', 'dev']);
      expect(imported).toMatch(/^KEY +RESULT\nDATABASE_POOL +created\nZONE +updated\nMOTD +created\nPEM +created\nEMPTY +created\n/);
      expect(imported).toMatch(/\n5 variables from \S+dev\.env on environment dev: 4 created, 1 updated, 0 unchanged\.\n$/);
      const values = new Map((await json<{ results: Listed[] }>(['var', 'list', '--env', 'dev'])).results.filter((row) => row.scope === 'ENVIRONMENT').map((row) => [row.key, row.value]));
      expect(Object.fromEntries(values)).toEqual({
        DATABASE_POOL: '5',
        ZONE: 'b',
        MOTD: 'Welcome!\nLine two with "quotes"',
        PEM: '-----BEGIN KEY-----\nabc\n-----END KEY-----',
        EMPTY: '',
      });
      expect(await succeeds(['var', 'list', '--env', 'dev'])).toMatch(/\nMOTD +Welcome!\\nLine two with "quotes" +ENVIRONMENT +VALUE\n/);

      await writeFile(dotenv, (await readFile(dotenv, 'utf8')).replace('DATABASE_POOL=5', 'DATABASE_POOL=10'));
      const again = await json<{ created: string[]; updated: string[]; unchanged: string[] }>(['var', 'import', dotenv, '--env', 'dev']);
      expect(again).toEqual({ scope: 'environment dev', secret: false, created: [], updated: ['DATABASE_POOL'], unchanged: ['ZONE', 'MOTD', 'PEM', 'EMPTY'] });

      const secrets = path.join(home, 'secrets.env');
      await writeFile(secrets, `API_KEY="${SECRET}"\nSIGNING_KEY=abc\n`);
      expect(await succeeds(['var', 'import', secrets, '--env', 'dev', '--secret'])).toMatch(/2 secrets from \S+ on environment dev: 2 created, 0 updated, 0 unchanged\.\n$/);
      // A secret cannot be read back to compare: importing it again updates it.
      expect(await json(['var', 'import', secrets, '--env', 'dev', '--secret'])).toMatchObject({ created: [], updated: ['API_KEY', 'SIGNING_KEY'], unchanged: [] });
      expect(await succeeds(['var', 'list', '--env', 'dev'])).not.toContain(SECRET);

      // A plain variable is not silently turned into a secret, nor the other way round: nothing of the file is written.
      await writeFile(secrets, 'NEW_ONE=1\nZONE=c\n');
      expect((await fails(['var', 'import', secrets, '--env', 'dev', '--secret'])).stderr).toBe(
        'slipway: ZONE is a plain variable on environment dev: import them without --secret, or unset them first; nothing was imported\n',
      );
      expect((await json<{ results: Listed[] }>(['var', 'list', '--env', 'dev'])).results.map((row) => row.key)).not.toContain('NEW_ONE');
      await writeFile(secrets, 'A=1\nthis line is wrong\n');
      expect((await fails(['var', 'import', secrets, '--env', 'dev'])).stderr).toBe(`slipway: ${secrets}, line 2: expected KEY=value\n`);
      expect((await fails(['var', 'import', path.join(home, 'absent.env'), '--env', 'dev'])).stderr).toBe(`slipway: cannot read ${path.join(home, 'absent.env')}: no such file\n`);
      expect((await fails(['var', 'list'])).stderr).toBe('slipway: name the scope: --project <id|name>, --env <id|name> or --service <id|name> (with --env)\n');
    });

    it('prints its version, and completion scripts generated from its commands that bash really completes with', { timeout: STEP_TIMEOUT_MS }, async () => {
      const { version } = JSON.parse(await readFile('package.json', 'utf8')) as { version: string };
      expect(await succeeds(['--version'])).toBe(`${version}\n`);

      const script = await succeeds(['completion', 'bash']);
      const scriptFile = path.join(home, 'slipway.bash');
      await writeFile(scriptFile, script);
      /** What bash offers after `words` (the last one being completed), with the script loaded. */
      const complete = (words: string[]) =>
        new Promise<string[]>((resolve, reject) => {
          const line = words.map((word) => `'${word}'`).join(' ');
          const program = `source "$1"; COMP_WORDS=(${line}); COMP_CWORD=${words.length - 1}; _slipway; printf '%s\\n' "\${COMPREPLY[@]}"`;
          const child = spawn('bash', ['--norc', '--noprofile', '-c', program, 'bash', scriptFile]);
          let stdout = '';
          let stderr = '';
          child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
          child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
          child.on('error', reject);
          child.on('close', (code) => (code === 0 && stderr === '' ? resolve(stdout.split('\n').filter((entry) => entry !== '')) : reject(new Error(`bash (${code}): ${stderr}`))));
        });
      expect(await complete(['slipway', 'cl'])).toEqual(['cluster']);
      expect(await complete(['slipway', 'env', ''])).toEqual(['create', 'list', 'deploy', 'stop', 'restart', 'status', 'delete', 'clone']);
      expect(await complete(['slipway', 'var', ''])).toEqual(['set', 'list', 'unset', 'import']);
      expect(await complete(['slipway', 'service', 're'])).toEqual(['redeploy', 'restart']);
      expect(await complete(['slipway', 'env', 'deploy', 'staging', '--w'])).toEqual(['--wait']);
      // The value of an option is not a command: `--project env` stays in `service`, not in `env`.
      expect(await complete(['slipway', 'service', 'stop', '--project', 'env', '--t'])).toEqual(['--timeout']);
      expect(await complete(['slipway', 'deploy', '--env', ''])).toEqual([]);

      const zsh = await succeeds(['completion', 'zsh']);
      expect(zsh).toMatch(/^#compdef slipway\n/);
      expect(zsh).toContain("'env deploy') commands=(); options=(");
      expect(zsh).toContain("'--wait:wait until it settles");
      expect(zsh).toMatch(/\ncompdef _slipway slipway\n$/);
      expect((await fails(['completion', 'fish'])).stderr).toBe('slipway: no completion for "fish"; one of bash, zsh\n');
    });
  });
}
