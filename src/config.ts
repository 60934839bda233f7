import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { Cron } from 'croner';
import { decodeSecretKey } from './lib/secret-box.ts';

/**
 * The one reader of process.env. Every SLIPWAY_* variable is parsed and validated here at start; an invalid value
 * stops the process with one line naming the variable (see main.ts). So are the OTEL_* variables that turn traces on
 * (`tracing`); the OpenTelemetry SDK reads its other standard ones itself (lib/tracing.sdk.ts).
 */
export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** postgres://… when set; otherwise the embedded SQLite database under dataDir. */
  databaseUrl: string | undefined;
  /**
   * SLIPWAY_DATABASE_PREPARED_STATEMENTS (default true; PostgreSQL only): parameterised queries as named, server-side
   * prepared statements (db/db.pg-statements.ts). false for a pooler that cannot hold them across transactions
   * (PgBouncer in transaction mode before 1.21).
   */
  databasePreparedStatements: boolean;
  oidc: { issuer: string; audience: string } | undefined;
  /**
   * SLIPWAY_SIGNUP (default invite): who may create an account at the built-in identity provider. `invite`: only an
   * address with a pending invitation to some organization; `open`: anyone; `closed`: nobody. In every mode the
   * address `slipway admin bootstrap` named may create its account. docs/identity.md.
   */
  signUp: SignUpMode;
  egressIps: string[];
  logLevel: LogLevel;
  /**
   * SLIPWAY_LOG_FORMAT: `json` (pino's records, one per line, for machines) or `pretty` (one short line per record,
   * for people); unset = pretty when standard output is a terminal, json otherwise (decided where the logger is made,
   * http/server.ts, since a terminal is not configuration).
   */
  logFormat: LogFormat | undefined;
  /**
   * The address people and the CLI reach this installation at (links in e-mails, the built-in identity provider's
   * issuer). Defaults to http://<host>:<port>.
   */
  publicUrl: string;
  /** smtp:// or smtps:// URL of the mail relay; unset keeps outgoing mail in the outbox table. */
  smtpUrl: string | undefined;
  /** From address of outgoing mail. */
  mailFrom: string;
  /**
   * The key that encrypts secrets at rest (git tokens): given in SLIPWAY_SECRET_KEY, or kept in a file under the data
   * directory that the server generates on first start (see lib/secret-box.ts loadOrCreateKeyFile).
   */
  secretKey: SecretKeySource;
  /** Lets git reach loopback/private addresses and plain http:// (tests, on-premise git servers). */
  gitAllowPrivateHosts: boolean;
  /**
   * Git hosts Slipway may reach (`git.example.com`, or `*.example.com` for its subdomains); empty = any public
   * host.
   */
  gitAllowedHosts: string[];
  /** Requests per minute per caller, counted by all replicas together (src/http/rate-limit.ts); 0 turns limiting off. */
  rateLimitPerMinute: number;
  /**
   * SLIPWAY_REDIS_URL (`redis://` or `rediss://`, an optional `/<db>`): where the replicas count the rate limit
   * together. Unset: in PostgreSQL's `rate_limit_counters` table, or in the process on SQLite. Its password is never
   * printed.
   */
  redisUrl: string | undefined;
  /**
   * SLIPWAY_JOB_STALE_AFTER_SECONDS (default 60, at least 3): a RUNNING job whose worker has not beaten for this long
   * is taken to belong to a dead worker and runs again elsewhere. Workers beat every fifth of it (5 s at most).
   */
  jobStaleAfterSeconds: number;
  /**
   * SLIPWAY_FALLBACK_POLL_MS (50 to 600000): how often idle job workers, agent long-polls and live log streams look
   * at the database for changes no signal announced (docs/operations.md, "Running N replicas"). Unset: 500 ms for
   * workers, 1 s for the others.
   */
  fallbackPollMs: number | undefined;
  /**
   * SLIPWAY_TEMPLATE_CATALOG_URL: where the platform template catalog comes from: an http(s) URL serving
   * `{ "releases": [...] }` (cached for a while), or a file:// URL of a catalog directory; unset = the bundled catalog.
   */
  templateCatalogUrl: string | undefined;
  /**
   * SLIPWAY_AWS_ENDPOINT_URL: the one endpoint the AWS SDK calls for STS and ECR (an AWS-compatible service, a
   * proxy, a test server); unset = AWS's regional endpoints.
   */
  awsEndpointUrl: string | undefined;
  /**
   * SLIPWAY_RUN_JOBS (default true): whether this process also runs the job worker. Any number of processes may run
   * it against one PostgreSQL database; API-only replicas set false.
   */
  runJobs: boolean;
  /**
   * Backups of the installation's own database (docs/operations.md, "Backing up and restoring"):
   * SLIPWAY_BACKUP_SCHEDULE, a cron expression (five fields, or six with seconds first; UTC) on which a worker
   * process writes one, none when unset; SLIPWAY_BACKUP_DIR (default `<data dir>/backups`), where those and
   * `slipway admin backup`'s go; SLIPWAY_BACKUP_RETENTION (default 7), how many scheduled backups are kept, the oldest
   * beyond it deleted after each.
   */
  backup: { schedule: string | undefined; dir: string; retention: number };
  /**
   * SLIPWAY_APPS_DOMAIN (default `localhost`): the domain under which services with a public port get their host
   * names (`<service>-<environment>.<appsDomain>`), which custom domains point at with a CNAME.
   */
  appsDomain: string;
  /**
   * SLIPWAY_DNS_SERVERS: the resolvers custom domain checks ask (`ip` or `ip:port`, comma-separated); empty = the
   * system's.
   */
  dnsServers: string[];
  /**
   * SLIPWAY_LOCAL_AGENT (default true): whether this process runs the agent of the LOCAL clusters, which deploys
   * their services on this host (docs/local-engine.md). Off: LOCAL deployments wait for an agent, as others do.
   */
  localAgent: boolean;
  /**
   * SLIPWAY_APPS_PORT (default 8000; 0 = any free port): where the local agent's reverse proxy serves the services
   * with a public port, by host name (`<service>-<environment>.<appsDomain>`), on SLIPWAY_HOST.
   */
  appsPort: number;
  /**
   * SLIPWAY_APPS_HTTPS_PORT (unset = no HTTPS; 0 = any free port): where the apps proxy serves HTTPS, on SLIPWAY_HOST,
   * with certificates ordered by ACME for the verified custom domains (docs/https.md). Setting it is what turns
   * automatic certificates on: ordering them makes sense only where the CA reaches the apps port on port 80.
   */
  appsHttpsPort: number | undefined;
  /** SLIPWAY_ACME_DIRECTORY_URL (default Let's Encrypt production): the ACME (RFC 8555) directory certificates come from. */
  acmeDirectoryUrl: string;
  /** SLIPWAY_ACME_EMAIL: the contact of the installation's ACME account (expiry notices of the CA); none when unset. */
  acmeEmail: string | undefined;
  /** SLIPWAY_ACME_CA_BUNDLE: a PEM file of the CA certificates trusted for the ACME server (a private CA, tests). */
  acmeCaBundle: string | undefined;
  /** SLIPWAY_HTTPS_SERVICE_HOSTNAMES (default on): whether the services' own host names get certificates too. */
  httpsServiceHostnames: 'on' | 'off';
  /**
   * SLIPWAY_HTTPS_PRIVATE_NAMES (default installation-ca): who issues for the names no public CA does (`localhost`,
   * `.test`, `.internal`, …: lib/public-domains.ts) — the installation's own CA, or the ACME directory (a private
   * ACME CA that issues for internal names).
   */
  httpsPrivateNames: HttpsPrivateNames;
  /**
   * SLIPWAY_APPS_HSTS (unset: none): the Strict-Transport-Security header of the apps proxy's HTTPS answers, as the
   * header's value (`max-age=31536000; includeSubDomains`); a service that sends its own keeps its own.
   */
  appsHsts: string | undefined;
  /**
   * A Kubernetes-driver agent's tools (docs/kubernetes.md; `slipway agent` flags override them):
   * SLIPWAY_HELM_BINARY (the helm HELM services are rendered with; `helm` on the PATH when unset),
   * SLIPWAY_KUBERNETES_BUILDER (kaniko or buildkit, checked by the agent command) and
   * SLIPWAY_WORKFLOW_RUNNER_IMAGE (the image AGENTIC_WORKFLOWs run; none: they fail saying so).
   */
  helmBinary: string | undefined;
  kubernetesBuilder: string | undefined;
  workflowRunnerImage: string | undefined;
  /**
   * SLIPWAY_AGENT_CONCURRENCY (default 4, 1 to 20): how many tasks an agent of this installation (the in-process one,
   * `slipway agent` unless given --concurrency) runs at once — builds, database starts, teardowns of different services.
   */
  agentConcurrency: number;
  /**
   * SLIPWAY_LOCAL_POSTGRES_URL: a PostgreSQL server (an account allowed to create roles and databases) on which the
   * local agent creates POSTGRESQL databases, instead of running a server of their own for each.
   */
  localPostgresUrl: string | undefined;
  /**
   * SLIPWAY_WORKLOAD_ISOLATION (default strict): `strict` runs every process of a service under a uid of its own in a
   * sandbox that hides the data directory and other processes, and refuses to deploy where the host cannot (the
   * agent not root, no bubblewrap); `none` runs workloads unconfined as the agent's own user (a developer's laptop).
   * docs/security.md.
   */
  workloadIsolation: WorkloadIsolation;
  /**
   * SLIPWAY_METRICS_TOKEN: the bearer token a scraper sends to `GET /metrics` on the API port (16 to 256 visible
   * characters, compared in constant time). Unset: the API port serves no /metrics (404). docs/operations.md.
   */
  metricsToken: string | undefined;
  /**
   * SLIPWAY_METRICS_ADDRESS (`host:port`, `[::1]:port` for IPv6): a separate plain HTTP listener serving only /metrics,
   * without a token — for a private network the scraper is on. Unset: none.
   */
  metricsAddress: { host: string; port: number } | undefined;
  /**
   * OpenTelemetry traces (docs/operations.md, "Traces"), from OpenTelemetry's own variables: on when
   * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the traces URL as given) or OTEL_EXPORTER_OTLP_ENDPOINT (a base URL, `/v1/traces`
   * appended) is set, unless OTEL_SDK_DISABLED=true; `serviceName` is OTEL_SERVICE_NAME (the process's default when
   * unset: `slipway`, `slipway-agent`). Spans go as OTLP/HTTP JSON, so OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL may only
   * say http/json. Undefined: off, and nothing of OpenTelemetry is loaded.
   */
  tracing: TracingConfig | undefined;
}

export interface TracingConfig {
  tracesUrl: string;
  serviceName: string | undefined;
}

export const WORKLOAD_ISOLATIONS = ['strict', 'none'] as const;
export type WorkloadIsolation = (typeof WORKLOAD_ISOLATIONS)[number];

export type SecretKeySource = { kind: 'value'; key: Buffer } | { kind: 'file'; file: string };

export const SIGN_UP_MODES = ['invite', 'open', 'closed'] as const;
export type SignUpMode = (typeof SIGN_UP_MODES)[number];

export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export class ConfigError extends Error {
  readonly variable: string;
  constructor(
    variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
    this.variable = variable;
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/**
 * A value from the environment as an error message shows it: JSON-quoted, so a newline or a terminal escape in it
 * cannot split the one-line message or forge another line of the log, and cut short, so a pasted file does not flood it.
 */
function shown(raw: string): string {
  const limit = 80;
  return JSON.stringify(raw.length > limit ? `${raw.slice(0, limit)}…` : raw);
}

function read(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function parsePort(env: Env): number {
  const raw = read(env, 'SLIPWAY_PORT');
  if (raw === undefined) return 8080;
  if (!/^\d+$/.test(raw) || Number(raw) > 65535) {
    throw new ConfigError('SLIPWAY_PORT', `must be an integer from 0 to 65535, got ${shown(raw)}`);
  }
  return Number(raw);
}

function parseAppsPort(env: Env): number {
  const raw = read(env, 'SLIPWAY_APPS_PORT');
  if (raw === undefined) return 8000;
  if (!/^\d+$/.test(raw) || Number(raw) > 65535) {
    throw new ConfigError('SLIPWAY_APPS_PORT', `must be an integer from 0 to 65535, got ${shown(raw)}`);
  }
  return Number(raw);
}

function parseAppsHttpsPort(env: Env): number | undefined {
  const raw = read(env, 'SLIPWAY_APPS_HTTPS_PORT');
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) > 65535) {
    throw new ConfigError('SLIPWAY_APPS_HTTPS_PORT', `must be an integer from 0 to 65535, got ${shown(raw)}`);
  }
  return Number(raw);
}

export const HTTPS_PRIVATE_NAMES = ['installation-ca', 'acme'] as const;
export type HttpsPrivateNames = (typeof HTTPS_PRIVATE_NAMES)[number];

/** Let's Encrypt's production directory; its staging one is https://acme-staging-v02.api.letsencrypt.org/directory. */
export const LETS_ENCRYPT_DIRECTORY_URL = 'https://acme-v02.api.letsencrypt.org/directory';

function parseAcmeDirectoryUrl(env: Env): string {
  const raw = read(env, 'SLIPWAY_ACME_DIRECTORY_URL');
  if (raw === undefined) return LETS_ENCRYPT_DIRECTORY_URL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('SLIPWAY_ACME_DIRECTORY_URL', `must be an https URL such as ${LETS_ENCRYPT_DIRECTORY_URL}, got ${shown(raw)}`);
  }
  // RFC 8555 §6.1: ACME is HTTPS only; a private CA or a test server on loopback is https too (SLIPWAY_ACME_CA_BUNDLE).
  if (url.protocol !== 'https:') throw new ConfigError('SLIPWAY_ACME_DIRECTORY_URL', `must be an https URL, got ${shown(raw)}`);
  return url.toString();
}

function parseAcmeEmail(env: Env): string | undefined {
  const raw = read(env, 'SLIPWAY_ACME_EMAIL');
  if (raw === undefined) return undefined;
  if (!/^[^\s@<>,;:"]+@[^\s@<>,;:"]+\.[^\s@<>,;:"]+$/.test(raw)) throw new ConfigError('SLIPWAY_ACME_EMAIL', `must be an e-mail address, got ${shown(raw)}`);
  return raw;
}

/** RFC 6797 §6.1's directives Slipway lets through: max-age (required), includeSubDomains, preload. */
function parseAppsHsts(env: Env): string | undefined {
  const raw = read(env, 'SLIPWAY_APPS_HSTS');
  if (raw === undefined) return undefined;
  const directives = raw.split(';').map((part) => part.trim()).filter((part) => part !== '');
  const maxAge = directives.filter((part) => /^max-age=\d{1,10}$/i.test(part));
  const others = directives.filter((part) => !/^max-age=/i.test(part));
  if (maxAge.length !== 1 || others.some((part) => !/^(includeSubDomains|preload)$/i.test(part)) || new Set(others.map((part) => part.toLowerCase())).size !== others.length) {
    throw new ConfigError('SLIPWAY_APPS_HSTS', `must be a Strict-Transport-Security value such as "max-age=31536000; includeSubDomains", got ${shown(raw)}`);
  }
  return directives.join('; ');
}

function parseAcmeCaBundle(env: Env): string | undefined {
  const raw = read(env, 'SLIPWAY_ACME_CA_BUNDLE');
  if (raw === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(raw, 'utf8');
  } catch (error) {
    throw new ConfigError('SLIPWAY_ACME_CA_BUNDLE', `cannot read ${shown(raw)}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) throw new ConfigError('SLIPWAY_ACME_CA_BUNDLE', `${shown(raw)} holds no PEM certificate`);
  return path.resolve(raw);
}

function parseAgentConcurrency(env: Env): number {
  const raw = read(env, 'SLIPWAY_AGENT_CONCURRENCY');
  if (raw === undefined) return 4;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 20) {
    throw new ConfigError('SLIPWAY_AGENT_CONCURRENCY', `must be an integer from 1 to 20, got ${shown(raw)}`);
  }
  return Number(raw);
}

function parseLocalPostgresUrl(env: Env): string | undefined {
  const raw = read(env, 'SLIPWAY_LOCAL_POSTGRES_URL');
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('SLIPWAY_LOCAL_POSTGRES_URL', 'must be a URL such as postgres://admin@127.0.0.1:5432/postgres');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError('SLIPWAY_LOCAL_POSTGRES_URL', `must use postgres:// or postgresql://, got ${shown(`${url.protocol}//`)}`);
  }
  return raw;
}

function parseMetricsToken(env: Env): string | undefined {
  const raw = read(env, 'SLIPWAY_METRICS_TOKEN');
  if (raw === undefined) return undefined;
  // The value itself is never echoed: it is a credential.
  if (!/^[\x21-\x7e]{16,256}$/.test(raw)) throw new ConfigError('SLIPWAY_METRICS_TOKEN', 'must be 16 to 256 visible ASCII characters without spaces');
  return raw;
}

function parseMetricsAddress(env: Env): Config['metricsAddress'] {
  const raw = read(env, 'SLIPWAY_METRICS_ADDRESS');
  if (raw === undefined) return undefined;
  const match = /^\[([^\]]+)\]:(\d{1,5})$/.exec(raw) ?? /^([^:[\]]+):(\d{1,5})$/.exec(raw);
  const host = match?.[1] ?? '';
  const port = Number(match?.[2]);
  const ipv6 = raw.startsWith('[');
  const validHost = ipv6 ? isIP(host) === 6 : isIP(host) === 4 || HOSTNAME.test(host);
  if (match === null || !validHost || port < 1 || port > 65535) {
    throw new ConfigError('SLIPWAY_METRICS_ADDRESS', `must be host:port such as 10.0.0.5:9464 or [::1]:9464, got ${shown(raw)}`);
  }
  return { host, port };
}

function parseDatabaseUrl(env: Env): string | undefined {
  const raw = read(env, 'SLIPWAY_DATABASE_URL');
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('SLIPWAY_DATABASE_URL', 'must be a URL such as postgres://user@host:5432/db');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError('SLIPWAY_DATABASE_URL', `must use postgres:// or postgresql://, got ${shown(`${url.protocol}//`)}`);
  }
  return raw;
}

/** `localhost`, an IPv4 address in 127.0.0.0/8 or `[::1]`; a DNS name such as `127.0.0.1.example.com` is not. */
function isLoopbackHost(hostname: string): boolean {
  if (hostname === 'localhost' || hostname === '[::1]') return true;
  return isIP(hostname) === 4 && hostname.startsWith('127.');
}

/**
 * An issuer must be https, except on loopback where http is allowed (local development and tests). OpenID Connect
 * Discovery forbids query and fragment components in an issuer; credentials in it would leak into every log line
 * that names the issuer.
 */
function parseOidc(env: Env): Config['oidc'] {
  const issuer = read(env, 'SLIPWAY_OIDC_ISSUER');
  const audience = read(env, 'SLIPWAY_OIDC_AUDIENCE');
  if (issuer === undefined) {
    if (audience !== undefined) {
      throw new ConfigError('SLIPWAY_OIDC_AUDIENCE', 'is set but SLIPWAY_OIDC_ISSUER is not');
    }
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new ConfigError('SLIPWAY_OIDC_ISSUER', `must be an absolute URL, got ${shown(issuer)}`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    throw new ConfigError('SLIPWAY_OIDC_ISSUER', 'must be an https:// URL (http:// is accepted only on loopback)');
  }
  if (/[?#]/.test(issuer) || url.username !== '' || url.password !== '') {
    throw new ConfigError('SLIPWAY_OIDC_ISSUER', 'must not carry a query, a fragment or credentials');
  }
  if (audience === undefined) {
    throw new ConfigError('SLIPWAY_OIDC_AUDIENCE', 'is required when SLIPWAY_OIDC_ISSUER is set');
  }
  return { issuer, audience };
}

/** One of a variable's words (any letter case), undefined when unset; anything else is refused naming the choices. */
function parseOptionalChoice<T extends string>(env: Env, name: string, choices: readonly T[]): T | undefined {
  const raw = read(env, name);
  if (raw === undefined) return undefined;
  const choice = choices.find((candidate) => candidate === raw.toLowerCase());
  if (choice === undefined) throw new ConfigError(name, `must be one of ${choices.join(', ')}, got ${shown(raw)}`);
  return choice;
}

/** One of a variable's words (any letter case), `fallback` when unset. */
function parseChoice<T extends string>(env: Env, name: string, choices: readonly T[], fallback: T): T {
  return parseOptionalChoice(env, name, choices) ?? fallback;
}

function parseEgressIps(env: Env): string[] {
  const raw = read(env, 'SLIPWAY_EGRESS_IPS');
  if (raw === undefined) return [];
  const ips = raw
    .split(',')
    .map((ip) => ip.trim())
    .filter((ip) => ip !== '');
  for (const ip of ips) {
    // A zone id (`fe80::1%eth0`) names an interface of this host, meaningless in a list published to customers.
    if (isIP(ip) === 0 || ip.includes('%')) throw new ConfigError('SLIPWAY_EGRESS_IPS', `${shown(ip)} is not an IPv4 or IPv6 address`);
  }
  return ips;
}

function parseLogLevel(env: Env): LogLevel {
  const raw = read(env, 'SLIPWAY_LOG_LEVEL') ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(raw)) {
    throw new ConfigError('SLIPWAY_LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}, got ${shown(raw)}`);
  }
  return raw as LogLevel;
}

const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** The address to listen on: an IPv4 or IPv6 address (`0.0.0.0`, `::` for all interfaces) or a host name. */
function parseHost(env: Env): string {
  const raw = read(env, 'SLIPWAY_HOST');
  if (raw === undefined) return '127.0.0.1';
  if (isIP(raw) === 0 && !HOSTNAME.test(raw)) {
    throw new ConfigError('SLIPWAY_HOST', `must be an IP address (IPv6 without brackets) or a host name, got ${shown(raw)}`);
  }
  return raw;
}

function parsePublicUrl(env: Env, host: string, port: number): string {
  const raw = read(env, 'SLIPWAY_PUBLIC_URL');
  if (raw === undefined) return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('SLIPWAY_PUBLIC_URL', `must be an absolute http(s) URL, got ${shown(raw)}`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '' || url.username !== '') {
    throw new ConfigError('SLIPWAY_PUBLIC_URL', 'must be an http(s) URL without query, fragment or credentials');
  }
  return raw.replace(/\/+$/, '');
}

function parseSmtpUrl(env: Env): string | undefined {
  const raw = read(env, 'SLIPWAY_SMTP_URL');
  if (raw === undefined) return undefined;
  let protocol: string;
  try {
    protocol = new URL(raw).protocol;
  } catch {
    throw new ConfigError('SLIPWAY_SMTP_URL', 'must be a URL such as smtp://user:password@host:587');
  }
  if (protocol !== 'smtp:' && protocol !== 'smtps:') {
    throw new ConfigError('SLIPWAY_SMTP_URL', `must use smtp:// or smtps://, got ${shown(`${protocol}//`)}`);
  }
  return raw;
}

const MAIL_ADDRESS = /^[^\s@<>]+@[^\s@<>]+$/;

function parseMailFrom(env: Env): string {
  const raw = read(env, 'SLIPWAY_MAIL_FROM') ?? 'Slipway <slipway@localhost>';
  const address = /<([^>]*)>\s*$/.exec(raw)?.[1] ?? raw;
  if (!MAIL_ADDRESS.test(address)) throw new ConfigError('SLIPWAY_MAIL_FROM', `must be an e-mail address, got ${shown(raw)}`);
  return raw;
}

/** The file name of the generated key under the data directory. */
export const SECRET_KEY_FILE_NAME = 'secret.key';

function parseSecretKey(env: Env, dataDir: string): SecretKeySource {
  const raw = read(env, 'SLIPWAY_SECRET_KEY');
  if (raw === undefined) return { kind: 'file', file: path.join(dataDir, SECRET_KEY_FILE_NAME) };
  const key = decodeSecretKey(raw);
  // The value itself is never echoed: it is a secret.
  if (key === undefined) throw new ConfigError('SLIPWAY_SECRET_KEY', 'must be 32 bytes written as 64 hex digits or as base64');
  return { kind: 'value', key };
}

function parseBoolean(env: Env, name: string, fallback = false): boolean {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new ConfigError(name, `must be true or false, got ${shown(raw)}`);
}

const HOST_PATTERN = /^(\*\.)?([a-z0-9]([a-z0-9-]*[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

function parseGitAllowedHosts(env: Env): string[] {
  const raw = read(env, 'SLIPWAY_GIT_ALLOWED_HOSTS');
  if (raw === undefined) return [];
  const hosts = raw
    .split(',')
    .map((host) => host.trim().toLowerCase())
    .filter((host) => host !== '');
  for (const host of hosts) {
    if (!HOST_PATTERN.test(host) || host.length > 253) {
      throw new ConfigError('SLIPWAY_GIT_ALLOWED_HOSTS', `${shown(host)} is not a host name or a *.domain pattern`);
    }
  }
  return hosts;
}

function parseAppsDomain(env: Env): string {
  const raw = read(env, 'SLIPWAY_APPS_DOMAIN')?.toLowerCase().replace(/\.$/, '');
  if (raw === undefined) return 'localhost';
  if (raw.startsWith('*.') || !HOST_PATTERN.test(raw) || raw.length > 200) {
    throw new ConfigError('SLIPWAY_APPS_DOMAIN', `${shown(raw)} is not a domain name such as apps.example.com`);
  }
  return raw;
}

/** `1.1.1.1`, `127.0.0.1:5353`, `[::1]:53` or `::1`: what node:dns Resolver.setServers accepts. */
function parseDnsServers(env: Env): string[] {
  const raw = read(env, 'SLIPWAY_DNS_SERVERS');
  if (raw === undefined) return [];
  const servers = raw
    .split(',')
    .map((server) => server.trim())
    .filter((server) => server !== '');
  for (const server of servers) {
    const match = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(server) ?? /^([^:]+)(?::(\d{1,5}))?$/.exec(server);
    const address = match?.[1] ?? server;
    const port = match?.[2];
    if (isIP(address) === 0 || (port !== undefined && (Number(port) < 1 || Number(port) > 65535))) {
      throw new ConfigError('SLIPWAY_DNS_SERVERS', `${shown(server)} is not an IP address with an optional :port`);
    }
  }
  return servers;
}

function parseBackup(env: Env, dataDir: string): Config['backup'] {
  const schedule = read(env, 'SLIPWAY_BACKUP_SCHEDULE');
  const rawRetention = read(env, 'SLIPWAY_BACKUP_RETENTION');
  if (schedule !== undefined) {
    let next: Date | null;
    try {
      next = new Cron(schedule, { timezone: 'UTC', paused: true }).nextRun();
    } catch {
      throw new ConfigError('SLIPWAY_BACKUP_SCHEDULE', `must be a cron expression such as "0 3 * * *" (five fields, or six with seconds first), got ${shown(schedule)}`);
    }
    if (next === null) throw new ConfigError('SLIPWAY_BACKUP_SCHEDULE', `never comes due, got ${shown(schedule)}`);
  } else if (rawRetention !== undefined) {
    throw new ConfigError('SLIPWAY_BACKUP_RETENTION', 'is set but SLIPWAY_BACKUP_SCHEDULE is not (only scheduled backups are deleted)');
  }
  if (rawRetention !== undefined && (!/^\d{1,4}$/.test(rawRetention) || Number(rawRetention) < 1)) {
    throw new ConfigError('SLIPWAY_BACKUP_RETENTION', `must be how many scheduled backups to keep, 1 to 9999, got ${shown(rawRetention)}`);
  }
  const dir = read(env, 'SLIPWAY_BACKUP_DIR');
  return { schedule, dir: dir === undefined ? path.join(dataDir, 'backups') : path.resolve(dir), retention: rawRetention === undefined ? 7 : Number(rawRetention) };
}

function parseRedisUrl(env: Env): string | undefined {
  const raw = read(env, 'SLIPWAY_REDIS_URL');
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('SLIPWAY_REDIS_URL', 'must be a URL such as redis://:password@host:6379/0');
  }
  // Only the scheme is quoted: the rest may carry a password.
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new ConfigError('SLIPWAY_REDIS_URL', `must use redis:// or rediss://, got ${shown(`${url.protocol}//`)}`);
  if (url.hostname === '') throw new ConfigError('SLIPWAY_REDIS_URL', 'must name a host, such as redis://127.0.0.1:6379');
  if (!/^\/?(\d{1,2})?$/.test(url.pathname)) throw new ConfigError('SLIPWAY_REDIS_URL', 'may end only with a database number, such as /0');
  return raw;
}

function parseWholeNumber(env: Env, name: string, min: number, max: number): number | undefined {
  const raw = read(env, name);
  if (raw === undefined) return undefined;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < min || Number(raw) > max) throw new ConfigError(name, `must be a whole number from ${min} to ${max}, got ${shown(raw)}`);
  return Number(raw);
}

function parseRateLimit(env: Env): number {
  const raw = read(env, 'SLIPWAY_RATE_LIMIT_PER_MINUTE');
  if (raw === undefined) return 1200;
  if (!/^\d{1,9}$/.test(raw)) throw new ConfigError('SLIPWAY_RATE_LIMIT_PER_MINUTE', `must be a whole number (0 turns limiting off), got ${shown(raw)}`);
  return Number(raw);
}

function parseAwsEndpointUrl(env: Env): string | undefined {
  const raw = read(env, 'SLIPWAY_AWS_ENDPOINT_URL');
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('SLIPWAY_AWS_ENDPOINT_URL', 'must be an absolute http(s) URL such as https://aws.example.com');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '' || url.username !== '') {
    throw new ConfigError('SLIPWAY_AWS_ENDPOINT_URL', 'must be an http(s) URL without query, fragment or credentials');
  }
  return raw;
}

function parseTemplateCatalogUrl(env: Env): string | undefined {
  const raw = read(env, 'SLIPWAY_TEMPLATE_CATALOG_URL');
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('SLIPWAY_TEMPLATE_CATALOG_URL', 'must be an absolute https://, http:// or file:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:' && url.protocol !== 'file:') {
    throw new ConfigError('SLIPWAY_TEMPLATE_CATALOG_URL', `must use https://, http:// or file://, got ${shown(`${url.protocol}//`)}`);
  }
  if (url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new ConfigError('SLIPWAY_TEMPLATE_CATALOG_URL', 'must not carry a fragment or credentials');
  }
  return raw;
}

/** An OTLP/HTTP endpoint: http(s), without credentials (a collector's belong in OTEL_EXPORTER_OTLP_HEADERS), query or fragment. */
function parseOtlpUrl(name: string, raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be an http(s) URL such as http://collector:4318, got ${shown(raw)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(name, `must use http:// or https://, got ${shown(`${url.protocol}//`)}`);
  if (url.username !== '' || url.password !== '') throw new ConfigError(name, 'must not carry credentials: give them in OTEL_EXPORTER_OTLP_HEADERS');
  if (url.search !== '' || url.hash !== '') throw new ConfigError(name, `must not carry a query or a fragment, got ${shown(raw)}`);
  return url;
}

const OTLP_PROTOCOL = 'http/json';

function parseTracing(env: Env): TracingConfig | undefined {
  const disabled = read(env, 'OTEL_SDK_DISABLED');
  if (disabled !== undefined && !/^(true|false)$/i.test(disabled)) throw new ConfigError('OTEL_SDK_DISABLED', `must be true or false, got ${shown(disabled)}`);
  const tracesEndpoint = read(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const endpoint = read(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (disabled?.toLowerCase() === 'true' || (tracesEndpoint === undefined && endpoint === undefined)) return undefined;
  // The traces endpoint is the whole URL; the general one is a base under which each signal has its path (OTLP spec).
  const tracesUrl =
    tracesEndpoint !== undefined
      ? parseOtlpUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', tracesEndpoint).href
      : `${parseOtlpUrl('OTEL_EXPORTER_OTLP_ENDPOINT', endpoint ?? '').href.replace(/\/+$/, '')}/v1/traces`;
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL']) {
    const protocol = read(env, name);
    if (protocol === undefined) continue;
    if (protocol.toLowerCase() !== OTLP_PROTOCOL) throw new ConfigError(name, `must be ${OTLP_PROTOCOL} (Slipway exports OTLP over HTTP as JSON) or unset, got ${shown(protocol)}`);
    break;
  }
  const serviceName = read(env, 'OTEL_SERVICE_NAME');
  // eslint-disable-next-line no-control-regex
  if (serviceName !== undefined && (serviceName.length > 255 || /[\u0000-\u001f\u007f]/.test(serviceName))) {
    throw new ConfigError('OTEL_SERVICE_NAME', `must be a name of at most 255 printable characters, got ${shown(serviceName)}`);
  }
  return { tracesUrl, serviceName };
}

/**
 * `.slipway` in the directory `npm start` serves from: npm runs its scripts in the project's root and names that root
 * in npm_config_local_prefix, for `npm start` and `npx slipway …` alike, so that an operator's command run from any
 * directory of the checkout (`npx slipway admin bootstrap`) opens the database the server uses instead of creating
 * another where it stands. Run without npm, the current directory's `.slipway`.
 */
function defaultDataDir(env: Env): string {
  return path.resolve(read(env, 'npm_config_local_prefix') ?? '.', '.slipway');
}

export function loadConfig(env: Env = process.env): Config {
  const host = parseHost(env);
  const port = parsePort(env);
  const explicitDataDir = read(env, 'SLIPWAY_DATA_DIR');
  const dataDir = explicitDataDir === undefined ? defaultDataDir(env) : path.resolve(explicitDataDir);
  return {
    publicUrl: parsePublicUrl(env, host, port),
    smtpUrl: parseSmtpUrl(env),
    mailFrom: parseMailFrom(env),
    host,
    port,
    dataDir,
    databaseUrl: parseDatabaseUrl(env),
    databasePreparedStatements: parseBoolean(env, 'SLIPWAY_DATABASE_PREPARED_STATEMENTS', true),
    oidc: parseOidc(env),
    signUp: parseChoice(env, 'SLIPWAY_SIGNUP', SIGN_UP_MODES, 'invite'),
    egressIps: parseEgressIps(env),
    logLevel: parseLogLevel(env),
    logFormat: parseOptionalChoice(env, 'SLIPWAY_LOG_FORMAT', LOG_FORMATS),
    secretKey: parseSecretKey(env, dataDir),
    gitAllowPrivateHosts: parseBoolean(env, 'SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS'),
    gitAllowedHosts: parseGitAllowedHosts(env),
    rateLimitPerMinute: parseRateLimit(env),
    redisUrl: parseRedisUrl(env),
    jobStaleAfterSeconds: parseWholeNumber(env, 'SLIPWAY_JOB_STALE_AFTER_SECONDS', 3, 86_400) ?? 60,
    fallbackPollMs: parseWholeNumber(env, 'SLIPWAY_FALLBACK_POLL_MS', 50, 600_000),
    awsEndpointUrl: parseAwsEndpointUrl(env),
    templateCatalogUrl: parseTemplateCatalogUrl(env),
    runJobs: parseBoolean(env, 'SLIPWAY_RUN_JOBS', true),
    backup: parseBackup(env, dataDir),
    appsDomain: parseAppsDomain(env),
    dnsServers: parseDnsServers(env),
    localAgent: parseBoolean(env, 'SLIPWAY_LOCAL_AGENT', true),
    appsPort: parseAppsPort(env),
    appsHttpsPort: parseAppsHttpsPort(env),
    acmeDirectoryUrl: parseAcmeDirectoryUrl(env),
    acmeEmail: parseAcmeEmail(env),
    acmeCaBundle: parseAcmeCaBundle(env),
    httpsServiceHostnames: parseChoice(env, 'SLIPWAY_HTTPS_SERVICE_HOSTNAMES', ['on', 'off'] as const, 'on'),
    httpsPrivateNames: parseChoice(env, 'SLIPWAY_HTTPS_PRIVATE_NAMES', HTTPS_PRIVATE_NAMES, 'installation-ca'),
    appsHsts: parseAppsHsts(env),
    helmBinary: read(env, 'SLIPWAY_HELM_BINARY'),
    kubernetesBuilder: read(env, 'SLIPWAY_KUBERNETES_BUILDER'),
    workflowRunnerImage: read(env, 'SLIPWAY_WORKFLOW_RUNNER_IMAGE'),
    agentConcurrency: parseAgentConcurrency(env),
    localPostgresUrl: parseLocalPostgresUrl(env),
    workloadIsolation: parseChoice(env, 'SLIPWAY_WORKLOAD_ISOLATION', WORKLOAD_ISOLATIONS, 'strict'),
    metricsToken: parseMetricsToken(env),
    metricsAddress: parseMetricsAddress(env),
    tracing: parseTracing(env),
  };
}

/** Reads the configuration or ends the process with one line naming the variable at fault. */
export function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`slipway: invalid configuration: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}
