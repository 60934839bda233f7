import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { credentialsPath, readCredentials, type CredentialsFile } from '../src/cli/credentials.ts';
import { openDatabase } from '../src/db/db.client.ts';
import { CliError, login, logout, type CliIo } from '../src/cli/sign-in.ts';
import { whoami } from '../src/cli/whoami.ts';
import { TEST_DIALECTS } from './support/databases.ts';
import { startIdentityTestApp, type IdentityTestApp } from './support/identity-app.ts';
import { approveDeviceCode, formAction, formField, TestBrowser } from './support/identity-browser.ts';

/**
 * `slipway login`, `whoami` and `logout` against a real listening server with its built-in identity provider: the
 * device flow is approved by driving the provider's pages over HTTP while the CLI polls; the stored credentials
 * are checked on disk; `whoami` also runs as the real `slipway` executable in a child process.
 */
const PASSWORD = 'correct horse battery staple';
const BIN = path.resolve('bin/slipway.js');
const run = promisify(execFile);

let counter = 0;
function uniqueEmail(): string {
  counter += 1;
  return `cli-${process.pid}-${counter}@example.com`;
}

/** A CLI environment of its own (config dir in a fresh temporary directory), recording what the CLI prints. */
interface FakeTerminal {
  io: CliIo;
  output(): string;
}

function terminal(env: Record<string, string | undefined>, onFirstWait: (printed: string) => Promise<void> = async () => undefined): FakeTerminal {
  let printed = '';
  let waited = false;
  return {
    io: {
      env,
      out: (text) => {
        printed += text;
      },
      // The person approves while the CLI waits before its first poll, so the first poll succeeds and no test
      // depends on how long anything takes.
      sleep: async () => {
        if (waited) return;
        waited = true;
        await onFirstWait(printed);
      },
    },
    output: () => printed,
  };
}

function codeAndUri(printed: string): { uri: string; code: string } {
  const uri = /open (\S+)\nand enter the code: (\S+)/.exec(printed);
  if (uri === null) throw new Error(`the CLI printed no code: ${printed}`);
  return { uri: uri[1] as string, code: uri[2] as string };
}

async function runCli(args: string[], env: Record<string, string | undefined>): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, ...env } as NodeJS.ProcessEnv });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

for (const dialect of TEST_DIALECTS) {
  describe(`slipway login / whoami / logout [${dialect}]`, () => {
    let ctx: IdentityTestApp;
    let configHome: string;
    let env: Record<string, string | undefined>;

    beforeAll(async () => {
      // Strangers create accounts to sign in with: who may sign up is test/sign-up.test.ts's subject.
      ctx = await startIdentityTestApp(dialect, { signUp: 'open' });
    });
    afterAll(async () => {
      await ctx?.close();
    });
    beforeEach(async () => {
      configHome = await mkdtemp(path.join(tmpdir(), 'slipway-cli-'));
      env = { XDG_CONFIG_HOME: configHome, HOME: configHome };
      return async () => {
        await rm(configHome, { recursive: true, force: true });
      };
    });

    async function signedIn(email: string): Promise<FakeTerminal> {
      await ctx.createVerifiedAccount(email, PASSWORD);
      const cli = terminal(env, async (printed) => {
        const { uri, code } = codeAndUri(printed);
        const page = await approveDeviceCode(new TestBrowser(), uri, code, email, PASSWORD);
        expect(page.status).toBe(200);
      });
      await login({ url: ctx.baseUrl }, cli.io);
      return cli;
    }

    it('signs in with the device flow and keeps the credentials in a 0600 file under XDG_CONFIG_HOME', async () => {
      const email = uniqueEmail();
      const cli = await signedIn(email);
      expect(cli.output()).toContain(`open ${ctx.issuer}/device`);
      expect(cli.output()).toContain(`Signed in to ${ctx.baseUrl} as ${email}.`);

      const file = credentialsPath(env);
      expect(file).toBe(path.join(configHome, 'slipway', 'credentials.json'));
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700);
      const stored = JSON.parse(await readFile(file, 'utf8')) as CredentialsFile;
      expect(stored.current).toBe(ctx.baseUrl);
      const credentials = stored.servers[ctx.baseUrl];
      expect(credentials?.issuer).toBe(ctx.issuer);
      expect(decodeJwt(credentials?.access_token as string).email).toBe(email);
      expect(typeof credentials?.refresh_token).toBe('string');
    });

    it('whoami, as the real executable, calls the API with the stored sign-in', async () => {
      const email = uniqueEmail();
      await signedIn(email);
      const stored = await readCredentials(env);
      const created = await fetch(`${ctx.baseUrl}/organization`, {
        method: 'POST',
        headers: { authorization: `Bearer ${stored.servers[ctx.baseUrl]?.access_token as string}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `cli-org-${process.pid}-${counter}` }),
      });
      expect(created.status).toBe(201);
      const organization = (await created.json()) as { id: string };

      const result = await runCli(['whoami'], env);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`${email} on ${ctx.baseUrl}`);
      expect(result.stdout).toContain(organization.id);
    });

    it('SLIPWAY_TOKEN overrides the stored sign-in', async () => {
      const email = uniqueEmail();
      await signedIn(email);
      const stored = await readCredentials(env);
      const userToken = stored.servers[ctx.baseUrl]?.access_token as string;
      const created = await fetch(`${ctx.baseUrl}/organization`, {
        method: 'POST',
        headers: { authorization: `Bearer ${userToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `cli-token-org-${process.pid}-${counter}` }),
      });
      const organizationId = ((await created.json()) as { id: string }).id;
      const tokenResponse = await fetch(`${ctx.baseUrl}/organization/${organizationId}/apiToken`, {
        method: 'POST',
        headers: { authorization: `Bearer ${userToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'cli', scope: 'READ' }),
      });
      expect(tokenResponse.status).toBe(201);
      const apiToken = ((await tokenResponse.json()) as { token: string }).token;

      const withApiToken = await runCli(['whoami'], { ...env, SLIPWAY_TOKEN: apiToken });
      expect(withApiToken.code).toBe(0);
      expect(withApiToken.stdout).toContain('an API token');
      expect(withApiToken.stdout).toContain('(from SLIPWAY_TOKEN)');
      expect(withApiToken.stdout).not.toContain(email);

      // A bad SLIPWAY_TOKEN is used, and refused, even though a valid sign-in is stored.
      const withBadToken = await runCli(['whoami'], { ...env, SLIPWAY_TOKEN: 'slw_not-a-real-token' });
      expect(withBadToken.code).toBe(1);
      expect(withBadToken.stderr).toContain('refused the token in SLIPWAY_TOKEN');
    });

    it('refreshes an expired access token with the stored refresh token', async () => {
      const email = uniqueEmail();
      await signedIn(email);
      const stored = await readCredentials(env);
      const before = stored.servers[ctx.baseUrl];
      if (before === undefined) throw new Error('no credentials stored');
      await writeFile(credentialsPath(env), JSON.stringify({ ...stored, servers: { [ctx.baseUrl]: { ...before, expires_at: 1 } } }));

      const cli = terminal(env);
      await whoami({}, cli.io);
      expect(cli.output()).toContain(`${email} on ${ctx.baseUrl}`);
      const after = (await readCredentials(env)).servers[ctx.baseUrl];
      expect(after?.access_token).not.toBe(before.access_token);
      expect(after?.expires_at).toBeGreaterThan(Date.now() / 1000);
      expect((await stat(credentialsPath(env))).mode & 0o777).toBe(0o600);
    });

    it('logout forgets the credentials and revokes the refresh token', async () => {
      const email = uniqueEmail();
      await signedIn(email);
      const refreshToken = (await readCredentials(env)).servers[ctx.baseUrl]?.refresh_token as string;
      const storedRefreshTokens = () =>
        ctx.database.db.selectFrom('oidc_records').select('id').where('model', '=', 'RefreshToken').where('id', '=', refreshToken).execute();
      expect(await storedRefreshTokens()).toHaveLength(1);

      const cli = terminal(env);
      await logout({}, cli.io);
      expect(cli.output()).toContain(`Signed out of ${ctx.baseUrl}.`);
      expect((await readCredentials(env)).servers).toEqual({});

      const refresh = await fetch(`${ctx.issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: 'slipway-cli' }),
      });
      expect(refresh.status).toBe(400);
      expect(await storedRefreshTokens()).toHaveLength(0);

      const result = await runCli(['whoami', '--url', ctx.baseUrl], env);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('not signed in');
    });

    it('reports a sign-in the person aborts', async () => {
      const cli = terminal(env, async (printed) => {
        const { uri, code } = codeAndUri(printed);
        const browser = new TestBrowser();
        const input = await browser.get(uri);
        const action = formAction(input.body, input.url) as string;
        const confirmation = await browser.post(action, { xsrf: formField(input.body, 'xsrf') as string, user_code: code });
        await browser.post(action, { xsrf: formField(confirmation.body, 'xsrf') as string, user_code: code, abort: 'yes' });
      });
      await expect(login({ url: ctx.baseUrl }, cli.io)).rejects.toThrow(new CliError('the sign-in was denied'));
      expect((await readCredentials(env)).servers).toEqual({});
    });

    it('reports an unreadable credentials file in one line instead of crashing', async () => {
      await mkdir(path.dirname(credentialsPath(env)), { recursive: true });
      await writeFile(credentialsPath(env), '{ not json');
      const result = await runCli(['whoami', '--url', ctx.baseUrl], env);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(`slipway: ${credentialsPath(env)} is not valid JSON; delete it and sign in again\n`);
    });

    it('refuses a server address that is not a URL, and reports an unreachable server in one line', async () => {
      await expect(login({ url: 'not a url' }, terminal(env).io)).rejects.toThrow(CliError);
      const result = await runCli(['login', '--url', 'http://127.0.0.1:1'], env);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^slipway: cannot reach http:\/\/127\.0\.0\.1:1\/oidc/);
    });
  });
}

describe('slipway admin rotate-signing-key', () => {
  it('makes a new key the signing one and keeps the previous one published as retired', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'slipway-keys-'));
    try {
      const env = { SLIPWAY_DATA_DIR: dataDir, SLIPWAY_LOG_LEVEL: 'silent' };
      const first = await runCli(['admin', 'rotate-signing-key'], env);
      const second = await runCli(['admin', 'rotate-signing-key'], env);
      expect(first.code).toBe(0);
      expect(second.code).toBe(0);
      const kidOf = (stdout: string) => /^signing key: (\S+)$/m.exec(stdout)?.[1];
      expect(kidOf(first.stdout)).toBeDefined();
      expect(kidOf(second.stdout)).not.toBe(kidOf(first.stdout));

      const database = openDatabase({ dialect: 'sqlite', file: path.join(dataDir, 'slipway.db') });
      try {
        const keys = await database.db.selectFrom('identity_keys').selectAll().where('use', '=', 'sig').execute();
        expect(keys.filter((key) => key.retired_at === null).map((key) => key.id)).toEqual([kidOf(second.stdout)]);
        expect(keys.find((key) => key.id === kidOf(first.stdout))?.retired_at).not.toBeNull();
      } finally {
        await database.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
