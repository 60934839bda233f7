import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TEST_DIALECTS } from './support/databases.ts';
import type { TestGitServer } from './support/git-server.ts';
import { processesUnder, requestThroughProxy } from './support/sample-apps.ts';
import { runSlipway, spawnSlipway, type CliResult, type SlipwayServer } from './support/slipway-process.ts';
import { createWalkthroughRepository, type WalkthroughAnswer } from './support/walkthrough-app.ts';
import { startFreshWorld } from './support/local-engine-world.ts';

/**
 * Issue 21's "done means": the README's walkthrough, run as it is written. The `sh walkthrough` code blocks of the
 * README's "Walkthrough" section are read, and their commands run in order with the real `slipway` executable, as a
 * new user would type them on a fresh installation — a real `slipway server` on a fresh data directory (SQLite, or
 * PostgreSQL when SLIPWAY_TEST_DATABASE_URL is set) whose in-process agent deploys for real on this host. Only three
 * things are replaced: the server (SLIPWAY_URL instead of http://127.0.0.1:8080), the git repository (the README's
 * http://127.0.0.1:9418/<name>.git becomes this test's git server, serving test/support/walkthrough-app.ts under that
 * name), and the installation's database for `slipway admin …` (the server's). `curl "$(slipway service open …)"` is
 * a request to the application through the apps proxy; nothing talks to the API but the CLI.
 *
 * Each command is checked for what a person would look for in its output — states, the URL, the variables' aliases,
 * the application's answers (the new value of a variable after the redeploy), history rows, the stopped state, the
 * deletion. `slipway logs … --follow` runs in the background (the README's "second shell") until the next request to
 * the application has printed its line there, then gets Ctrl-C (SIGINT) and must end quietly. A README change that
 * breaks the walkthrough, or drops one of its steps, fails this test. Nothing here is timed: waits poll.
 */

const README = path.resolve('README.md');
const RUN_TIMEOUT_MS = 900_000;
const SETTLE_DEADLINE_MS = 150_000;
/** The git server the README's walkthrough serves its example from. */
const README_GIT_URL = /^http:\/\/127\.0\.0\.1:9418\/([A-Za-z0-9._-]+)\.git$/;

// ---------------------------------------------------------------------------------------------------------------
// Reading the walkthrough

/** One word of a command line: literal text, or `$(…)` (a command whose output is the word). */
type Word = { text: string } | { substitution: Word[] };

interface Command {
  /** The line as the README writes it (continuations joined), for messages. */
  line: string;
  words: Word[];
}

/** The README's "## Walkthrough" section, up to the next second-level heading. */
function walkthroughSection(readme: string): string {
  const start = readme.indexOf('\n## Walkthrough\n');
  if (start < 0) throw new Error('README.md has no "## Walkthrough" section');
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

/** The contents of the section's fenced blocks whose info string is `sh walkthrough`, in order. */
function walkthroughBlocks(section: string): string[] {
  return [...section.matchAll(/^```sh walkthrough\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? '');
}

/** Splits a shell line into words: quotes, `$(…)` (bare or in double quotes), and a `#` comment ending it. */
function shellWords(line: string): Word[] {
  const words: Word[] = [];
  let index = 0;
  const substitutionAt = (at: number): { inner: string; end: number } => {
    let depth = 0;
    for (let cursor = at; cursor < line.length; cursor += 1) {
      if (line[cursor] === '(') depth += 1;
      if (line[cursor] === ')' && --depth === 0) return { inner: line.slice(at + 1, cursor), end: cursor + 1 };
    }
    throw new Error(`unclosed $( in: ${line}`);
  };
  while (index < line.length) {
    while (line[index] === ' ' || line[index] === '\t') index += 1;
    if (index >= line.length || line[index] === '#') break;
    let text = '';
    let substitution: Word[] | undefined;
    while (index < line.length && line[index] !== ' ' && line[index] !== '\t') {
      const char = line[index] as string;
      if (char === "'") {
        const close = line.indexOf("'", index + 1);
        if (close < 0) throw new Error(`unclosed ' in: ${line}`);
        text += line.slice(index + 1, close);
        index = close + 1;
      } else if (char === '"') {
        if (line.startsWith('"$(', index)) {
          const { inner, end } = substitutionAt(index + 2);
          if (line[end] !== '"') throw new Error(`only "$(…)" alone is understood in double quotes: ${line}`);
          substitution = shellWords(inner);
          index = end + 1;
          continue;
        }
        const close = line.indexOf('"', index + 1);
        if (close < 0) throw new Error(`unclosed " in: ${line}`);
        const quoted = line.slice(index + 1, close);
        if (/[$`\\]/.test(quoted)) throw new Error(`expansions in double quotes are not understood: ${line}`);
        text += quoted;
        index = close + 1;
      } else if (char === '$') {
        if (line[index + 1] !== '(') throw new Error(`the walkthrough's commands name no shell variable (they would not be run as written): ${line}`);
        const { inner, end } = substitutionAt(index + 1);
        substitution = shellWords(inner);
        index = end;
      } else if (char === '\\' || char === '&' || char === '|' || char === ';' || char === '>' || char === '<' || char === '`') {
        throw new Error(`"${char}" is not understood by the walkthrough's runner: ${line}`);
      } else {
        text += char;
        index += 1;
      }
    }
    if (substitution !== undefined) {
      if (text !== '') throw new Error(`a $(…) is understood only as a whole word: ${line}`);
      words.push({ substitution });
    } else words.push({ text });
  }
  return words;
}

/** The commands of the blocks, in order: comment lines and blank lines left out, `\` continuations joined. */
function walkthroughCommands(blocks: string[]): Command[] {
  const commands: Command[] = [];
  for (const block of blocks) {
    const joined = block.replace(/\\\n\s*/g, ' ');
    for (const raw of joined.split('\n')) {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) continue;
      // `export NAME=$VALUE …` sets what the CLI acts as: the test knows it from the bootstrap (see run).
      commands.push({ line, words: line.startsWith('export ') ? [{ text: 'export' }] : shellWords(line) });
    }
  }
  return commands;
}

function literal(word: Word | undefined, line: string): string {
  if (word === undefined || !('text' in word)) throw new Error(`expected a plain word in: ${line}`);
  return word.text;
}

/** `npx slipway <args>` → args; anything else → undefined. */
function slipwayArgs(words: Word[], line: string): string[] | undefined {
  if (words.length < 2 || !('text' in words[0]!) || words[0].text !== 'npx' || literal(words[1], line) !== 'slipway') return undefined;
  return words.slice(2).map((word) => literal(word, line));
}

/** The value of `--<name> <value>` among args. */
function option(args: string[], name: string): string | undefined {
  const at = args.indexOf(`--${name}`);
  return at < 0 ? undefined : args[at + 1];
}

const has = (args: string[], flag: string) => args.includes(flag);
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

describe('the README walkthrough as the test reads it', () => {
  it('finds the marked blocks and understands their commands', async () => {
    const blocks = walkthroughBlocks(walkthroughSection(await readFile(README, 'utf8')));
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    const commands = walkthroughCommands(blocks);
    expect(commands.length).toBeGreaterThan(10);
    expect(shellWords(`npx slipway var set A '$B' --env x   # a comment`)).toEqual([
      { text: 'npx' },
      { text: 'slipway' },
      { text: 'var' },
      { text: 'set' },
      { text: 'A' },
      { text: '$B' },
      { text: '--env' },
      { text: 'x' },
    ]);
    expect(shellWords('curl -s "$(npx slipway service open web --env staging)"')).toEqual([
      { text: 'curl' },
      { text: '-s' },
      { substitution: [{ text: 'npx' }, { text: 'slipway' }, { text: 'service' }, { text: 'open' }, { text: 'web' }, { text: '--env' }, { text: 'staging' }] },
    ]);
    expect(() => shellWords('npx slipway deploy $APP')).toThrow('name no shell variable');
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Running it

for (const dialect of TEST_DIALECTS) {
  describe(`the README walkthrough, run with the CLI on a fresh installation [${dialect}]`, () => {
    let server: SlipwayServer | undefined;
    let gitServer: TestGitServer | undefined;
    let home = '';
    let dataDir = '';
    let appsPort = 0;
    let commands: Command[] = [];
    let follower: ReturnType<typeof spawnSlipway> | undefined;
    let world: Awaited<ReturnType<typeof startFreshWorld>> | undefined;

    beforeAll(async () => {
      commands = walkthroughCommands(walkthroughBlocks(walkthroughSection(await readFile(README, 'utf8'))));
      home = await mkdtemp(path.join(tmpdir(), 'slipway-readme-home-'));
      // Every repository the walkthrough names is served, under the name it gives, with the walkthrough's application.
      const repositories = new Set(
        commands.flatMap(({ words, line }) => {
          const url = option(slipwayArgs(words, line) ?? [], 'repository');
          const name = url === undefined ? undefined : README_GIT_URL.exec(url)?.[1];
          return name === undefined ? [] : [name];
        }),
      );
      // A fresh installation: no organization until the walkthrough's `admin bootstrap` makes one.
      world = await startFreshWorld(dialect, {
        name: 'readme',
        repositories: async (root) => {
          for (const name of repositories) await createWalkthroughRepository(root, name);
        },
      });
      ({ server, gitServer, dataDir, appsPort } = world);
    }, 240_000);

    afterAll(async () => {
      if (follower !== undefined && follower.exitCode === null && follower.signalCode === null) {
        follower.kill('SIGKILL');
        await follower.result;
      }
      await world?.close();
      if (home !== '') await rm(home, { recursive: true, force: true });
    }, 60_000);

    it('walks the daily loop: cluster, project, environment, PostgreSQL + Redis + app from git, deploy, live logs, variable, redeploy, history, stop, delete', { timeout: RUN_TIMEOUT_MS }, async () => {
      if (server === undefined || gitServer === undefined) throw new Error('the set-up did not finish');
      const running = server;
      const git = gitServer;
      let credentials: { SLIPWAY_TOKEN: string; SLIPWAY_ORGANIZATION: string } | undefined;
      /** The steps of the daily loop seen so far, to check that the README keeps every one. */
      const seen = new Set<string>();
      /** Variables set on each service, as the walkthrough set them, and as the last deploy took them. */
      const variables = new Map<string, Map<string, string>>();
      const deployedVariables = new Map<string, Map<string, string>>();
      const databases = new Map<string, string>();
      const applications = new Set<string>();
      const deployedServices = new Set<string>();
      let deploys = 0;
      let lastVisits = 0;

      function cliEnv(): Record<string, string> {
        return { HOME: home, XDG_CONFIG_HOME: home, SLIPWAY_URL: running.baseUrl, ...(credentials ?? {}) };
      }

      /** The server's warnings and errors so far, to explain a failure. */
      function serverTrouble(): string {
        return running
          .output()
          .split('\n')
          .filter((line) => /"level":(40|50|60)/.test(line))
          .slice(-20)
          .join('\n');
      }

      /** Runs `slipway <args>` as the README does, the git URL replaced by the test's; fails unless it succeeds. */
      async function slipway(args: string[], line: string): Promise<string> {
        const replaced = args.map((arg) => {
          const name = README_GIT_URL.exec(arg)?.[1];
          return name === undefined ? arg : git.urlOf(name);
        });
        const result: CliResult = replaced[0] === 'admin' ? await running.operator(replaced) : await runSlipway(replaced, cliEnv());
        const context = `${line}\nexit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}\nserver trouble:\n${serverTrouble()}`;
        expect(result.code, context).toBe(0);
        // The operator's commands name the database they act on, on standard error; client commands print nothing there.
        if (replaced[0] === 'admin') expect(result.stderr, context).toMatch(/^(slipway: (using|created) the database [^\n]+\n)*$/);
        else expect(result.stderr, context).toBe('');
        return result.stdout;
      }

      /** `GET <url>` through the apps proxy (the URL's host name in Host), as curl does with a *.localhost URL. */
      async function visit(url: string): Promise<WalkthroughAnswer> {
        const parsed = new URL(url);
        expect(parsed.port).toBe(String(appsPort));
        const answer = await requestThroughProxy(appsPort, parsed.hostname, `${parsed.pathname}${parsed.search}`);
        expect(answer.status, answer.body).toBe(200);
        return JSON.parse(answer.body) as WalkthroughAnswer;
      }

      async function followerShows(pattern: RegExp): Promise<void> {
        await vi
          .waitFor(() => expect(follower?.printed()).toMatch(pattern), { timeout: SETTLE_DEADLINE_MS, interval: 250 })
          .catch((error: unknown) => {
            throw new Error(
              `slipway logs --follow did not print ${pattern} (${(error as Error).message.split('\n')[0] ?? ''}); it printed:\n${follower?.printed() ?? ''}\nserver trouble:\n${serverTrouble()}`,
            );
          });
      }

      async function run(command: Command): Promise<void> {
        const { words, line } = command;
        const first = words[0] !== undefined && 'text' in words[0] ? words[0].text : '';

        if (first === 'export') {
          // The walkthrough's credentials for the CLI: what the bootstrap printed, which the test has already.
          if (line.includes('SLIPWAY_TOKEN')) expect(credentials, `${line}: the bootstrap did not run before`).toBeDefined();
          return;
        }

        if (first === 'curl') {
          // A request to the application at the URL `slipway service open` prints.
          const target = words.at(-1);
          if (target === undefined || !('substitution' in target)) throw new Error(`the walkthrough's curl lines ask the application at "$(npx slipway service open …)": ${line}`);
          const openArgs = slipwayArgs(target.substitution, line);
          if (openArgs === undefined || openArgs[0] !== 'service' || openArgs[1] !== 'open') throw new Error(`not a request to an application: ${line}`);
          const service = openArgs[2] as string;
          const environment = option(openArgs, 'env') as string;
          const url = (await slipway(openArgs, line)).trimEnd();
          expect(url, line).toMatch(new RegExp(`^http://${escape(service)}-${escape(environment)}-[a-z2-7]{8}\\.localhost:${appsPort}$`));
          const answer = await visit(url);
          // What the application was deployed with: the greeting set before the last deploy, not one set since.
          const greeting = deployedVariables.get(service)?.get('GREETING');
          if (greeting !== undefined) expect(answer.greeting, line).toBe(greeting);
          // Each request is a visit recorded in PostgreSQL and counted in Redis: both databases serve it.
          expect(answer.visits, line).toBe(lastVisits + 1);
          expect(answer.cached_visits, line).toBe(lastVisits + 1);
          lastVisits = answer.visits;
          seen.add('request');
          if (follower !== undefined) {
            // The follower (the README's second shell) shows the line this request made the application print.
            await followerShows(new RegExp(`^\\S+ \\[stdout\\] visits: GET / \\(visit ${answer.visits}, greeting ${escape(answer.greeting)}\\)$`, 'm'));
            seen.add('logs followed');
            follower.kill('SIGINT');
            const ended = await follower.result;
            expect(ended.stderr, 'slipway logs --follow after Ctrl-C').toBe('');
            expect(ended.code, 'slipway logs --follow after Ctrl-C').toBe(0);
            follower = undefined;
          }
          return;
        }

        const args = slipwayArgs(words, line);
        if (args === undefined) throw new Error(`the walkthrough's runner knows npx slipway, curl "$(npx slipway service open …)" and export lines: ${line}`);
        const [noun = '', verb = '', name = ''] = args;
        const environment = option(args, 'env');
        // `deploy <service>`, `status <service>`, `history <service>`; `service <verb> <service>`, `env <verb> <env>` …
        const target = ['deploy', 'status', 'history', 'logs'].includes(noun) ? verb : name;
        const serviceName = option(args, 'service') ?? target;

        if (noun === 'logs' && has(args, '--follow')) {
          // In the README's second shell: running until the next request's line shows, then Ctrl-C.
          follower = spawnSlipway(args, cliEnv());
          seen.add('logs --follow');
          return;
        }

        const out = await slipway(args, line);
        const lines = out.trimEnd().split('\n');

        if (noun === 'admin' && verb === 'bootstrap') {
          expect(has(args, '--json'), line).toBe(true);
          const created = JSON.parse(out) as { user_id: string; organization_id: string; api_token: string };
          expect(created.api_token, line).toMatch(/^slw_/);
          credentials = { SLIPWAY_TOKEN: created.api_token, SLIPWAY_ORGANIZATION: created.organization_id };
          return;
        }
        expect(credentials, `${line}: the walkthrough signs in (admin bootstrap) first`).toBeDefined();

        if (noun === 'cluster' && verb === 'create') {
          expect(out, line).toMatch(new RegExp(`^Created LOCAL cluster ${escape(name)} \\(${UUID}\\), READY\\.`));
          seen.add('cluster');
        } else if (noun === 'cluster' && verb === 'deploy') {
          expect(has(args, '--wait'), line).toBe(true);
          expect(out, line).toMatch(new RegExp(`^cluster ${escape(name)}: DEPLOYED after \\d+s\\n$`));
          seen.add('cluster deployed');
        } else if (noun === 'projects' && verb === 'create') {
          expect(out, line).toMatch(new RegExp(`^Created project ${escape(name)} \\(${UUID}\\)\\.\\n$`));
          seen.add('project');
        } else if (noun === 'env' && verb === 'create') {
          expect(out, line).toMatch(new RegExp(`^Created environment ${escape(name)} \\(${UUID}\\), \\w+, on cluster ${escape(option(args, 'cluster') ?? '')}`));
          seen.add('environment');
        } else if (noun === 'service' && verb === 'create') {
          const [, , kind = '', created = ''] = args;
          expect(out, line).toMatch(new RegExp(`^Created ${escape(kind)} ${escape(created)} \\(${UUID}\\)\\.\\n$`));
          if (kind === 'database') {
            const type = (JSON.parse(option(args, 'settings') ?? '{}') as { type?: string }).type ?? '';
            databases.set(created, type);
            seen.add(`database ${type}`);
          }
          if (kind === 'application') {
            expect(option(args, 'repository'), line).toMatch(README_GIT_URL);
            applications.add(created);
            seen.add('application from git');
          }
        } else if (noun === 'var' && verb === 'set') {
          const [, , key = '', value = ''] = args;
          const scope = option(args, 'service');
          expect(scope, `${line}: the walkthrough sets the application's own variables`).toBeDefined();
          expect(out, line).toBe(`Set variable ${key} on application ${scope} (APPLICATION).\n`);
          const own = variables.get(scope as string) ?? new Map<string, string>();
          own.set(key, value);
          variables.set(scope as string, own);
          if (value.startsWith('$PLATFORM_DATABASE_')) seen.add(`alias ${value}`);
          if (deployedServices.has(scope as string)) seen.add('variable changed after the deploy');
        } else if (noun === 'var' && verb === 'list') {
          expect(lines[0], line).toMatch(/^KEY +VALUE +SCOPE +TYPE +PROVENANCE$/);
          for (const [key, value] of variables.get(serviceName) ?? []) {
            const alias = /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(value)?.[1];
            // An alias of a database's built-in says so; the built-in it names is one of the environment's.
            if (alias !== undefined) expect(lines, line).toContainEqual(expect.stringMatching(new RegExp(`^${key} +${escape(value)} +APPLICATION +ALIAS +alias of ${alias} \\(BUILT_IN\\)$`)));
            else expect(lines, line).toContainEqual(expect.stringMatching(new RegExp(`^${key} +${escape(value)} +APPLICATION +VALUE$`)));
          }
        } else if (noun === 'deploy') {
          expect(has(args, '--wait'), line).toBe(true);
          expect(out, line).toMatch(new RegExp(`^Deployment ${UUID} of application ${escape(target)}: QUEUED\\n(?:[^\\n]*\\n)*application ${escape(target)}: DEPLOYED after \\d+s\\n$`));
          // The databases its aliases target came along: deployed too.
          deployedServices.add(target);
          for (const database of databases.keys()) deployedServices.add(database);
          deployedVariables.set(target, new Map(variables.get(target)));
          deploys += 1;
          seen.add('deploy --wait');
        } else if (noun === 'service' && verb === 'list') {
          expect(lines[0], line).toMatch(/^ID +NAME +KIND +STATE +DEPLOYMENT +URL$/);
          for (const database of databases.keys()) {
            expect(lines, line).toContainEqual(expect.stringMatching(new RegExp(`^${UUID} +${escape(database)} +DATABASE +DEPLOYED +UP_TO_DATE +-$`)));
          }
          for (const application of applications) {
            const url = `http://${escape(application)}-${escape(environment ?? '')}-[a-z2-7]{8}\\.localhost:${appsPort}`;
            expect(lines, line).toContainEqual(expect.stringMatching(new RegExp(`^${UUID} +${escape(application)} +APPLICATION +DEPLOYED +UP_TO_DATE +${url}$`)));
          }
        } else if (noun === 'status') {
          // The variable changed since the deploy: what runs is out of date until the next one.
          const changed = [...(variables.get(target) ?? [])].some(([key, value]) => deployedVariables.get(target)?.get(key) !== value);
          expect(out, line).toMatch(new RegExp(`^application ${escape(target)}: DEPLOYED, ${changed ? 'OUT_OF_DATE' : 'UP_TO_DATE'}`));
          if (changed) seen.add('out of date');
        } else if (noun === 'service' && verb === 'redeploy') {
          expect(has(args, '--wait'), line).toBe(true);
          expect(out, line).toMatch(new RegExp(`^application ${escape(name)}: DEPLOYED after \\d+s\\n$`));
          deployedVariables.set(name, new Map(variables.get(name)));
          deploys += 1;
          seen.add('redeploy');
        } else if (noun === 'history') {
          expect(lines[0], line).toMatch(/^DEPLOYMENT +CREATED +ACTION +STATE +VERSION +DURATION +BY +MESSAGE$/);
          // One row per deploy and redeploy, newest first, each DEPLOYED with the commit it built.
          const rows = lines.slice(1);
          expect(rows, line).toHaveLength(deploys);
          for (const row of rows) expect(row, line).toMatch(new RegExp(`^${UUID} +\\S+ +DEPLOY +DEPLOYED +(?:[0-9a-f]{12}|-) +PT\\S+ +token:\\S+ \\([A-Z]+\\)`));
          const created = rows.map((row) => row.split(/ +/)[1] ?? '');
          expect(created, line).toEqual([...created].sort().reverse());
          seen.add('history');
        } else if ((noun === 'env' || noun === 'service') && verb === 'stop') {
          expect(has(args, '--wait'), line).toBe(true);
          const subject = noun === 'env' ? `environment ${name}` : `application ${name}`;
          expect(lines.at(-1), line).toMatch(new RegExp(`^${escape(subject)}: STOPPED after \\d+s$`));
          // Stopped: the application's URL answers no more.
          for (const application of applications) {
            const url = (await slipway(['service', 'open', application, '--env', environment ?? name], line)).trimEnd();
            await vi.waitFor(async () => expect((await requestThroughProxy(appsPort, new URL(url).hostname)).status).not.toBe(200), { timeout: SETTLE_DEADLINE_MS, interval: 250 });
          }
          const listed = await slipway(['service', 'list', '--env', environment ?? name], line);
          const stopped = noun === 'env' ? [...deployedServices] : [name];
          for (const service of stopped) expect(listed, line).toMatch(new RegExp(`^${UUID} +${escape(service)} +\\w+ +STOPPED `, 'm'));
          seen.add('stop');
        } else if (noun === 'service' && verb === 'delete') {
          expect(has(args, '--yes'), line).toBe(true);
          expect(out, line).toMatch(new RegExp(`^Deleted application ${escape(name)} \\(${UUID}\\)\\.\\n$`));
          applications.delete(name);
          deployedServices.delete(name);
          expect(await slipway(['service', 'list', '--env', environment ?? ''], line)).not.toMatch(new RegExp(` ${escape(name)} `));
          seen.add('delete service');
        } else if (noun === 'env' && verb === 'delete') {
          expect(has(args, '--yes'), line).toBe(true);
          expect(out, line).toMatch(new RegExp(`^Deleted environment ${escape(name)} \\(${UUID}\\)\\.\\n$`));
          expect(await runSlipway(['service', 'list', '--env', name], cliEnv())).toMatchObject({ code: 1, stderr: expect.stringMatching(/^slipway: [^\n]*\n$/) });
          // Nothing it ran is left: no application instance, no database server under the data directory.
          await vi.waitFor(
            async () => {
              const left = (await processesUnder(dataDir)).filter((process) => !process.commandLine.includes('apps-proxy'));
              expect(left.map((process) => process.commandLine)).toEqual([]);
            },
            { timeout: SETTLE_DEADLINE_MS, interval: 500 },
          );
          seen.add('delete environment');
        }
      }

      for (const command of commands) await run(command);

      // The walkthrough keeps every step of the daily loop.
      const steps = [
        'cluster',
        'cluster deployed',
        'project',
        'environment',
        'database POSTGRESQL',
        'database REDIS',
        'application from git',
        'deploy --wait',
        'request',
        'logs --follow',
        'logs followed',
        'variable changed after the deploy',
        'out of date',
        'redeploy',
        'history',
        'stop',
        'delete environment',
      ];
      expect(
        steps.filter((step) => !seen.has(step)),
        'steps of the daily loop the README\'s walkthrough no longer takes',
      ).toEqual([]);
      expect([...seen].filter((step) => step.startsWith('alias $PLATFORM_DATABASE_')).length, 'aliases of both databases\' built-ins').toBeGreaterThanOrEqual(2);
      expect(follower, 'slipway logs --follow was ended').toBeUndefined();
    });
  });
}
