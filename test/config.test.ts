import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';

/**
 * config.ts is the one reader of process.env: defaults, every SLIPWAY_* variable parsed, every invalid value
 * refused with a ConfigError naming the variable, and the real process stopping with one line that names it.
 */

const REPOSITORY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The ConfigError `loadConfig(env)` throws; fails the test when it throws nothing or something else. */
function configErrorOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

/** 32 bytes as 64 hex digits. */
const HEX_KEY = '8f3b0c1d2e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d';

const OIDC = { SLIPWAY_OIDC_ISSUER: 'https://idp.example.com', SLIPWAY_OIDC_AUDIENCE: 'slipway' };

describe('loadConfig', () => {
  it('defaults to 127.0.0.1:8080, ./.slipway resolved, the embedded SQLite database, no OIDC, no egress IPs, info logs', () => {
    expect(loadConfig({})).toEqual({
      host: '127.0.0.1',
      port: 8080,
      dataDir: path.resolve('./.slipway'),
      databaseUrl: undefined,
      oidc: undefined,
      signUp: 'invite',
      egressIps: [],
      logLevel: 'info',
      logFormat: undefined,
      publicUrl: 'http://127.0.0.1:8080',
      smtpUrl: undefined,
      mailFrom: 'Slipway <slipway@localhost>',
      secretKey: { kind: 'file', file: path.join(path.resolve('./.slipway'), 'secret.key') },
      gitAllowPrivateHosts: false,
      gitAllowedHosts: [],
      rateLimitPerMinute: 1200,
      jobStaleAfterSeconds: 60,
      runJobs: true,
      databasePreparedStatements: true,
      appsDomain: 'localhost',
      dnsServers: [],
      localAgent: true,
      appsPort: 8000,
      agentConcurrency: 4,
      localPostgresUrl: undefined,
      workloadIsolation: 'strict',
      appsHttpsPort: undefined,
      acmeDirectoryUrl: 'https://acme-v02.api.letsencrypt.org/directory',
      acmeEmail: undefined,
      httpsServiceHostnames: 'on',
      httpsPrivateNames: 'installation-ca',
      appsHsts: undefined,
      acmeCaBundle: undefined,
      backup: { schedule: undefined, dir: path.join(path.resolve('./.slipway'), 'backups'), retention: 7 },
      metricsToken: undefined,
      metricsAddress: undefined,
      tracing: undefined,
    });
    expect(path.isAbsolute(loadConfig({}).dataDir)).toBe(true);
  });

  it('treats empty and blank variables as unset', () => {
    expect(loadConfig({ SLIPWAY_PORT: '', SLIPWAY_HOST: '   ', SLIPWAY_DATABASE_URL: '', SLIPWAY_LOG_LEVEL: ' ' })).toEqual(loadConfig({}));
  });

  it('parses every variable', () => {
    const config = loadConfig({
      SLIPWAY_HOST: '0.0.0.0',
      SLIPWAY_PORT: '9090',
      SLIPWAY_DATA_DIR: 'var/slipway-data',
      SLIPWAY_DATABASE_URL: 'postgres://slipway:secret@db.internal:5432/slipway',
      SLIPWAY_OIDC_ISSUER: 'https://accounts.example.com/realms/main',
      SLIPWAY_OIDC_AUDIENCE: 'slipway-api',
      SLIPWAY_SIGNUP: 'Closed',
      SLIPWAY_EGRESS_IPS: ' 203.0.113.7, 2001:db8::1 ,,198.51.100.20',
      SLIPWAY_LOG_LEVEL: 'debug',
      SLIPWAY_LOG_FORMAT: 'JSON',
      SLIPWAY_PUBLIC_URL: 'https://deploy.example.com/',
      SLIPWAY_SMTP_URL: 'smtps://mailer:secret@smtp.example.com:465',
      SLIPWAY_MAIL_FROM: 'Deployments <deploy@example.com>',
      SLIPWAY_SECRET_KEY: HEX_KEY,
      SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS: 'true',
      SLIPWAY_GIT_ALLOWED_HOSTS: ' github.com, *.Example.com ,,',
      SLIPWAY_RATE_LIMIT_PER_MINUTE: '0',
      SLIPWAY_REDIS_URL: 'rediss://:s3cret@cache.internal:6380/2',
      SLIPWAY_JOB_STALE_AFTER_SECONDS: '15',
      SLIPWAY_FALLBACK_POLL_MS: '5000',
      SLIPWAY_RUN_JOBS: 'false',
      SLIPWAY_DATABASE_PREPARED_STATEMENTS: 'false',
      SLIPWAY_APPS_DOMAIN: 'Apps.Example.com.',
      SLIPWAY_DNS_SERVERS: '1.1.1.1, 127.0.0.1:5353,[::1]:53',
      SLIPWAY_LOCAL_AGENT: 'false',
      SLIPWAY_APPS_PORT: '8443',
      SLIPWAY_AGENT_CONCURRENCY: '2',
      SLIPWAY_LOCAL_POSTGRES_URL: 'postgres://admin@127.0.0.1:5432/postgres',
      SLIPWAY_WORKLOAD_ISOLATION: 'none',
      SLIPWAY_APPS_HTTPS_PORT: '8444',
      SLIPWAY_ACME_DIRECTORY_URL: 'https://acme-staging-v02.api.letsencrypt.org/directory',
      SLIPWAY_HTTPS_SERVICE_HOSTNAMES: 'off',
      SLIPWAY_HTTPS_PRIVATE_NAMES: 'acme',
      SLIPWAY_APPS_HSTS: 'max-age=300',
      SLIPWAY_HELM_BINARY: '/opt/helm/helm',
      SLIPWAY_KUBERNETES_BUILDER: 'buildkit',
      SLIPWAY_WORKFLOW_RUNNER_IMAGE: 'registry.example.com/runner:1',
      SLIPWAY_ACME_EMAIL: 'ops@example.com',
      SLIPWAY_ACME_CA_BUNDLE: '/etc/ssl/certs/ca-certificates.crt',
      SLIPWAY_BACKUP_SCHEDULE: '0 3 * * *',
      SLIPWAY_BACKUP_DIR: '/srv/backups',
      SLIPWAY_BACKUP_RETENTION: '14',
      SLIPWAY_METRICS_TOKEN: 'metrics-token-of-32-characters-at-least',
      SLIPWAY_METRICS_ADDRESS: '10.0.0.5:9464',
    });
    expect(config).toEqual({
      host: '0.0.0.0',
      port: 9090,
      dataDir: path.resolve('var/slipway-data'),
      databaseUrl: 'postgres://slipway:secret@db.internal:5432/slipway',
      oidc: { issuer: 'https://accounts.example.com/realms/main', audience: 'slipway-api' },
      signUp: 'closed',
      egressIps: ['203.0.113.7', '2001:db8::1', '198.51.100.20'],
      logLevel: 'debug',
      logFormat: 'json',
      publicUrl: 'https://deploy.example.com',
      smtpUrl: 'smtps://mailer:secret@smtp.example.com:465',
      mailFrom: 'Deployments <deploy@example.com>',
      secretKey: { kind: 'value', key: Buffer.from(HEX_KEY, 'hex') },
      gitAllowPrivateHosts: true,
      gitAllowedHosts: ['github.com', '*.example.com'],
      rateLimitPerMinute: 0,
      redisUrl: 'rediss://:s3cret@cache.internal:6380/2',
      jobStaleAfterSeconds: 15,
      fallbackPollMs: 5000,
      runJobs: false,
      databasePreparedStatements: false,
      appsDomain: 'apps.example.com',
      dnsServers: ['1.1.1.1', '127.0.0.1:5353', '[::1]:53'],
      localAgent: false,
      appsPort: 8443,
      agentConcurrency: 2,
      localPostgresUrl: 'postgres://admin@127.0.0.1:5432/postgres',
      workloadIsolation: 'none',
      appsHttpsPort: 8444,
      acmeDirectoryUrl: 'https://acme-staging-v02.api.letsencrypt.org/directory',
      acmeEmail: 'ops@example.com',
      httpsServiceHostnames: 'off',
      httpsPrivateNames: 'acme',
      appsHsts: 'max-age=300',
      helmBinary: '/opt/helm/helm',
      kubernetesBuilder: 'buildkit',
      workflowRunnerImage: 'registry.example.com/runner:1',
      acmeCaBundle: '/etc/ssl/certs/ca-certificates.crt',
      backup: { schedule: '0 3 * * *', dir: '/srv/backups', retention: 14 },
      metricsToken: 'metrics-token-of-32-characters-at-least',
      metricsAddress: { host: '10.0.0.5', port: 9464 },
    });
  });

  it('puts the default data directory where npm start runs, the project root npm names for npx too, else in the current directory', () => {
    // npm runs `npm start` in the project root and names it in npm_config_local_prefix, for `npx slipway …` as well.
    expect(loadConfig({ npm_config_local_prefix: '/srv/checkout' }).dataDir).toBe('/srv/checkout/.slipway');
    expect(loadConfig({ npm_config_local_prefix: '/srv/checkout' }).secretKey).toEqual({ kind: 'file', file: '/srv/checkout/.slipway/secret.key' });
    expect(loadConfig({ npm_config_local_prefix: '/srv/checkout', SLIPWAY_DATA_DIR: 'data' }).dataDir).toBe(path.resolve('data'));
    expect(loadConfig({}).dataDir).toBe(path.resolve('.slipway'));
  });

  it('reads SLIPWAY_LOG_FORMAT as json or pretty, unset leaving the choice to the terminal, and refuses anything else naming it', () => {
    expect(loadConfig({ SLIPWAY_LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
    expect(loadConfig({ SLIPWAY_LOG_FORMAT: ' Json ' }).logFormat).toBe('json');
    expect(loadConfig({ SLIPWAY_LOG_FORMAT: ' ' }).logFormat).toBeUndefined();
    expect(configErrorOf({ SLIPWAY_LOG_FORMAT: 'text' }).message).toBe('SLIPWAY_LOG_FORMAT: must be one of json, pretty, got "text"');
  });

  it('reads the secret key as hex or base64 (32 bytes), else names the key file under the data directory', () => {
    const key = Buffer.from(HEX_KEY, 'hex');
    expect(loadConfig({ SLIPWAY_SECRET_KEY: key.toString('base64') }).secretKey).toEqual({ kind: 'value', key });
    expect(loadConfig({ SLIPWAY_SECRET_KEY: key.toString('base64url') }).secretKey).toEqual({ kind: 'value', key });
    expect(loadConfig({ SLIPWAY_DATA_DIR: '/srv/slipway' }).secretKey).toEqual({ kind: 'file', file: '/srv/slipway/secret.key' });
    expect(loadConfig({ SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS: 'false' }).gitAllowPrivateHosts).toBe(false);
  });

  it('reads SLIPWAY_WORKLOAD_ISOLATION as strict (the default) or none, and refuses anything else naming it', () => {
    expect(loadConfig({}).workloadIsolation).toBe('strict');
    expect(loadConfig({ SLIPWAY_WORKLOAD_ISOLATION: ' NONE ' }).workloadIsolation).toBe('none');
    for (const raw of ['off', 'false', 'loose', 'strictest']) {
      const error = configErrorOf({ SLIPWAY_WORKLOAD_ISOLATION: raw });
      expect(error.variable).toBe('SLIPWAY_WORKLOAD_ISOLATION');
      expect(error.message).toContain('strict, none');
    }
  });

  it('reads SLIPWAY_SIGNUP as invite (the default), open or closed, and refuses anything else naming it', () => {
    expect(loadConfig({}).signUp).toBe('invite');
    for (const mode of ['invite', 'open', 'closed'] as const) expect(loadConfig({ SLIPWAY_SIGNUP: ` ${mode.toUpperCase()} ` }).signUp).toBe(mode);
    for (const raw of ['yes', 'true', 'invited', 'anyone']) {
      const error = configErrorOf({ SLIPWAY_SIGNUP: raw });
      expect(error.variable).toBe('SLIPWAY_SIGNUP');
      expect(error.message).toBe(`SLIPWAY_SIGNUP: must be one of invite, open, closed, got "${raw}"`);
    }
  });

  it('shows a refused value JSON-quoted and cut short, so it cannot split the one-line message or flood it', () => {
    const injected = configErrorOf({ SLIPWAY_PORT: '80\n{"level":50,"msg":"forged"}' });
    expect(injected.message).toBe('SLIPWAY_PORT: must be an integer from 0 to 65535, got "80\\n{\\"level\\":50,\\"msg\\":\\"forged\\"}"');
    expect(injected.message).not.toContain('\n');
    const escape = configErrorOf({ SLIPWAY_LOG_LEVEL: 'info\u001b[2J' });
    expect(escape.message).not.toContain('\u001b');
    expect(escape.message).toContain('\\u001b[2J');
    const pasted = configErrorOf({ SLIPWAY_APPS_DOMAIN: 'x'.repeat(5000) });
    expect(pasted.message.length).toBeLessThan(200);
    expect(pasted.message).toContain(`"${'x'.repeat(80)}…"`);
    for (const variable of ['SLIPWAY_EGRESS_IPS', 'SLIPWAY_GIT_ALLOWED_HOSTS', 'SLIPWAY_DNS_SERVERS', 'SLIPWAY_SMTP_URL', 'SLIPWAY_MAIL_FROM']) {
      expect(configErrorOf({ [variable]: 'a\nb' }).message, variable).not.toContain('\n');
    }
  });

  it('runs the job worker unless SLIPWAY_RUN_JOBS is false', () => {
    expect(loadConfig({}).runJobs).toBe(true);
    expect(loadConfig({ SLIPWAY_RUN_JOBS: 'false' }).runJobs).toBe(false);
    expect(configErrorOf({ SLIPWAY_RUN_JOBS: 'no' }).variable).toBe('SLIPWAY_RUN_JOBS');
    expect(configErrorOf({ SLIPWAY_DATABASE_PREPARED_STATEMENTS: 'off' }).variable).toBe('SLIPWAY_DATABASE_PREPARED_STATEMENTS');
  });

  it('refuses an apps domain that is not a domain name and DNS servers that are not IP addresses', () => {
    for (const value of ['*.apps.example.com', 'apps_example.com', 'https://apps.example.com']) expect(configErrorOf({ SLIPWAY_APPS_DOMAIN: value }).variable).toBe('SLIPWAY_APPS_DOMAIN');
    for (const value of ['dns.example.com', '1.1.1.1:0', '1.1.1.1:70000', '300.1.1.1']) expect(configErrorOf({ SLIPWAY_DNS_SERVERS: value }).variable).toBe('SLIPWAY_DNS_SERVERS');
  });

  it('refuses an apps port out of range, a local agent switch that is not a boolean, a shared PostgreSQL that is not postgres:// and an agent concurrency outside 1–20', () => {
    for (const value of ['-1', '65536', 'http']) expect(configErrorOf({ SLIPWAY_APPS_PORT: value }).variable).toBe('SLIPWAY_APPS_PORT');
    expect(configErrorOf({ SLIPWAY_LOCAL_AGENT: 'off' }).variable).toBe('SLIPWAY_LOCAL_AGENT');
    for (const value of ['mysql://root@127.0.0.1/db', 'not a url']) expect(configErrorOf({ SLIPWAY_LOCAL_POSTGRES_URL: value }).variable).toBe('SLIPWAY_LOCAL_POSTGRES_URL');
    expect(loadConfig({ SLIPWAY_APPS_PORT: '0' }).appsPort).toBe(0);
    for (const value of ['0', '21', '1.5', 'four']) expect(configErrorOf({ SLIPWAY_AGENT_CONCURRENCY: value }).variable).toBe('SLIPWAY_AGENT_CONCURRENCY');
  });

  it('never repeats a refused secret key', () => {
    const error = configErrorOf({ SLIPWAY_SECRET_KEY: 'short-s3cr3t-key' });
    expect(error.variable).toBe('SLIPWAY_SECRET_KEY');
    expect(error.message).not.toContain('s3cr3t');
  });

  it('accepts the edges of every valid range', () => {
    expect(loadConfig({ SLIPWAY_PORT: '0' }).port).toBe(0);
    expect(loadConfig({ SLIPWAY_PORT: '65535' }).port).toBe(65535);
    expect(loadConfig({ SLIPWAY_HOST: '::' }).host).toBe('::');
    expect(loadConfig({ SLIPWAY_HOST: 'api.internal.example.com' }).host).toBe('api.internal.example.com');
    expect(loadConfig({ SLIPWAY_HOST: 'localhost' }).host).toBe('localhost');
    expect(loadConfig({ SLIPWAY_DATA_DIR: '/srv/slipway' }).dataDir).toBe('/srv/slipway');
    expect(loadConfig({ SLIPWAY_DATABASE_URL: 'postgresql://localhost/slipway' }).databaseUrl).toBe('postgresql://localhost/slipway');
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) {
      expect(loadConfig({ SLIPWAY_LOG_LEVEL: level }).logLevel).toBe(level);
    }
    // http:// is accepted for an issuer on loopback only (local development and tests).
    for (const issuer of ['http://127.0.0.1:5556', 'http://localhost:8080/realms/dev', 'http://[::1]:9000', 'http://127.10.0.1']) {
      expect(loadConfig({ SLIPWAY_OIDC_ISSUER: issuer, SLIPWAY_OIDC_AUDIENCE: 'a' }).oidc).toEqual({ issuer, audience: 'a' });
    }
  });

  it.each([
    ['SLIPWAY_PORT', { SLIPWAY_PORT: '70000' }],
    ['SLIPWAY_PORT', { SLIPWAY_PORT: 'abc' }],
    ['SLIPWAY_PORT', { SLIPWAY_PORT: '-1' }],
    ['SLIPWAY_PORT', { SLIPWAY_PORT: '80.5' }],
    ['SLIPWAY_PORT', { SLIPWAY_PORT: '1e3' }],
    ['SLIPWAY_PORT', { SLIPWAY_PORT: '99999999999999999999999' }],
    ['SLIPWAY_HOST', { SLIPWAY_HOST: 'not a host' }],
    ['SLIPWAY_PUBLIC_URL', { SLIPWAY_PUBLIC_URL: 'deploy.example.com' }],
    ['SLIPWAY_PUBLIC_URL', { SLIPWAY_PUBLIC_URL: 'ftp://deploy.example.com' }],
    ['SLIPWAY_PUBLIC_URL', { SLIPWAY_PUBLIC_URL: 'https://deploy.example.com/?x=1' }],
    ['SLIPWAY_SMTP_URL', { SLIPWAY_SMTP_URL: 'http://smtp.example.com' }],
    ['SLIPWAY_SMTP_URL', { SLIPWAY_SMTP_URL: 'not a url' }],
    ['SLIPWAY_MAIL_FROM', { SLIPWAY_MAIL_FROM: 'Deployments <not-an-address>' }],
    ['SLIPWAY_HOST', { SLIPWAY_HOST: 'http://0.0.0.0' }],
    ['SLIPWAY_HOST', { SLIPWAY_HOST: '[::1]' }],
    ['SLIPWAY_DATABASE_URL', { SLIPWAY_DATABASE_URL: 'mysql://root@db/slipway' }],
    ['SLIPWAY_DATABASE_URL', { SLIPWAY_DATABASE_URL: 'sqlite:///var/slipway.db' }],
    ['SLIPWAY_DATABASE_URL', { SLIPWAY_DATABASE_URL: 'not a url' }],
    ['SLIPWAY_OIDC_ISSUER', { ...OIDC, SLIPWAY_OIDC_ISSUER: 'ftp://idp.example.com' }],
    ['SLIPWAY_OIDC_ISSUER', { ...OIDC, SLIPWAY_OIDC_ISSUER: 'http://idp.example.com' }],
    ['SLIPWAY_OIDC_ISSUER', { ...OIDC, SLIPWAY_OIDC_ISSUER: 'http://10.0.0.5:8080' }],
    ['SLIPWAY_OIDC_ISSUER', { ...OIDC, SLIPWAY_OIDC_ISSUER: 'http://127.0.0.1.nip.io' }],
    ['SLIPWAY_OIDC_ISSUER', { ...OIDC, SLIPWAY_OIDC_ISSUER: 'idp.example.com' }],
    ['SLIPWAY_OIDC_ISSUER', { ...OIDC, SLIPWAY_OIDC_ISSUER: 'https://idp.example.com/?tenant=a' }],
    ['SLIPWAY_OIDC_ISSUER', { ...OIDC, SLIPWAY_OIDC_ISSUER: 'https://idp.example.com/#x' }],
    ['SLIPWAY_OIDC_ISSUER', { ...OIDC, SLIPWAY_OIDC_ISSUER: 'https://admin:pw@idp.example.com' }],
    ['SLIPWAY_OIDC_AUDIENCE', { SLIPWAY_OIDC_AUDIENCE: 'slipway' }],
    ['SLIPWAY_OIDC_AUDIENCE', { SLIPWAY_OIDC_ISSUER: 'https://idp.example.com' }],
    ['SLIPWAY_EGRESS_IPS', { SLIPWAY_EGRESS_IPS: '300.1.1.1' }],
    ['SLIPWAY_EGRESS_IPS', { SLIPWAY_EGRESS_IPS: '203.0.113.7,example.com' }],
    ['SLIPWAY_EGRESS_IPS', { SLIPWAY_EGRESS_IPS: '203.0.113.0/24' }],
    ['SLIPWAY_EGRESS_IPS', { SLIPWAY_EGRESS_IPS: 'fe80::1%eth0' }],
    ['SLIPWAY_LOG_LEVEL', { SLIPWAY_LOG_LEVEL: 'loud' }],
    ['SLIPWAY_LOG_LEVEL', { SLIPWAY_LOG_LEVEL: 'verbose' }],
    ['SLIPWAY_SECRET_KEY', { SLIPWAY_SECRET_KEY: 'too-short' }],
    ['SLIPWAY_SECRET_KEY', { SLIPWAY_SECRET_KEY: HEX_KEY.slice(2) }],
    ['SLIPWAY_SECRET_KEY', { SLIPWAY_SECRET_KEY: Buffer.alloc(16, 7).toString('base64') }],
    ['SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS', { SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS: 'yes' }],
    ['SLIPWAY_GIT_ALLOWED_HOSTS', { SLIPWAY_GIT_ALLOWED_HOSTS: 'https://github.com' }],
    ['SLIPWAY_RATE_LIMIT_PER_MINUTE', { SLIPWAY_RATE_LIMIT_PER_MINUTE: '-1' }],
    ['SLIPWAY_RATE_LIMIT_PER_MINUTE', { SLIPWAY_RATE_LIMIT_PER_MINUTE: 'lots' }],
    ['SLIPWAY_GIT_ALLOWED_HOSTS', { SLIPWAY_GIT_ALLOWED_HOSTS: 'git.example.com, *' }],
    ['SLIPWAY_JOB_STALE_AFTER_SECONDS', { SLIPWAY_JOB_STALE_AFTER_SECONDS: '2' }],
    ['SLIPWAY_JOB_STALE_AFTER_SECONDS', { SLIPWAY_JOB_STALE_AFTER_SECONDS: 'soon' }],
    ['SLIPWAY_FALLBACK_POLL_MS', { SLIPWAY_FALLBACK_POLL_MS: '10' }],
    ['SLIPWAY_FALLBACK_POLL_MS', { SLIPWAY_FALLBACK_POLL_MS: '1.5' }],
  ] as [string, Record<string, string>][])('refuses %s in %j with a ConfigError naming it', (variable, env) => {
    const error = configErrorOf(env);
    expect(error.variable).toBe(variable);
    expect(error.message.startsWith(`${variable}: `)).toBe(true);
  });

  it('never repeats the credentials of a refused database URL', () => {
    const error = configErrorOf({ SLIPWAY_DATABASE_URL: 'mysql://root:s3cr3t-value@db/slipway' });
    expect(error.variable).toBe('SLIPWAY_DATABASE_URL');
    expect(error.message).not.toContain('s3cr3t-value');
  });

  it('reads SLIPWAY_AWS_ENDPOINT_URL as an http(s) URL, unset by default, and never repeats a refused one', () => {
    expect(loadConfig({}).awsEndpointUrl).toBeUndefined();
    expect(loadConfig({ SLIPWAY_AWS_ENDPOINT_URL: 'http://127.0.0.1:4566' }).awsEndpointUrl).toBe('http://127.0.0.1:4566');
    for (const refused of ['ftp://aws.example.com', 'https://key:s3cr3t-value@aws.example.com', 'https://aws.example.com/?a=1', 'not a url s3cr3t-value']) {
      const error = configErrorOf({ SLIPWAY_AWS_ENDPOINT_URL: refused });
      expect(error.variable).toBe('SLIPWAY_AWS_ENDPOINT_URL');
      expect(error.message).not.toContain('s3cr3t-value');
    }
  });

  it('reads SLIPWAY_REDIS_URL as a redis(s) URL with an optional database number, and never repeats a refused one', () => {
    expect(loadConfig({}).redisUrl).toBeUndefined();
    for (const accepted of ['redis://127.0.0.1:6379', 'redis://127.0.0.1:6379/5', 'rediss://:pw@cache.example.com:6380/0']) {
      expect(loadConfig({ SLIPWAY_REDIS_URL: accepted }).redisUrl).toBe(accepted);
    }
    for (const refused of ['http://:s3cr3t-value@cache:6379', 'redis://:s3cr3t-value@cache:6379/not-a-db', 'redis://:s3cr3t-value@/0', 'no url s3cr3t-value']) {
      const error = configErrorOf({ SLIPWAY_REDIS_URL: refused });
      expect(error.variable).toBe('SLIPWAY_REDIS_URL');
      expect(error.message).not.toContain('s3cr3t-value');
    }
  });

  it('reads SLIPWAY_TEMPLATE_CATALOG_URL as an http(s) or file URL, unset by default, and never repeats a refused one', () => {
    expect(loadConfig({}).templateCatalogUrl).toBeUndefined();
    for (const accepted of ['https://catalog.example.com/templates.json?token=abc', 'http://127.0.0.1:9000/catalog', 'file:///srv/slipway/catalog/']) {
      expect(loadConfig({ SLIPWAY_TEMPLATE_CATALOG_URL: accepted }).templateCatalogUrl).toBe(accepted);
    }
    for (const refused of ['ftp://catalog.example.com', 'https://user:s3cr3t-value@catalog.example.com', 'https://catalog.example.com/#x', 'no url s3cr3t-value']) {
      const error = configErrorOf({ SLIPWAY_TEMPLATE_CATALOG_URL: refused });
      expect(error.variable).toBe('SLIPWAY_TEMPLATE_CATALOG_URL');
      expect(error.message).not.toContain('s3cr3t-value');
    }
  });

  it('reports the first invalid variable even when others are valid', () => {
    const error = configErrorOf({ ...OIDC, SLIPWAY_PORT: '8081', SLIPWAY_LOG_LEVEL: 'loud' });
    expect(error.variable).toBe('SLIPWAY_LOG_LEVEL');
  });
});

describe('the server process', () => {
  it('exits non-zero printing exactly one line naming SLIPWAY_PORT when SLIPWAY_PORT=abc', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'slipway-config-'));
    const env: NodeJS.ProcessEnv = {};
    for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('SLIPWAY_')) env[name] = value;
    env.SLIPWAY_PORT = 'abc';
    env.SLIPWAY_DATA_DIR = dataDir;
    try {
      const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const child = spawn(process.execPath, ['src/main.ts'], { cwd: REPOSITORY, env, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
        // A process that started serving instead of refusing would never exit on its own.
        const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
        child.on('error', reject);
        child.on('close', (code) => {
          clearTimeout(guard);
          resolve({ code, stdout, stderr });
        });
      });
      expect(result.code).not.toBe(0);
      expect(result.code).not.toBeNull();
      expect(result.stdout).toBe('');
      const lines = result.stderr.split('\n').filter((line) => line !== '');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('SLIPWAY_PORT');
      expect(lines[0]).not.toMatch(/\bat\b.*:\d+:\d+/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});
