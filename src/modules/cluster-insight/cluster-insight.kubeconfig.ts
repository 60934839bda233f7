import { parseDocument, stringify } from 'yaml';
import { badRequest, type FieldProblem } from '../../lib/errors.ts';

/**
 * A self-managed cluster's kubeconfig (docs/cluster-insight.md, "Kubeconfig"): what editClusterKubeconfig accepts,
 * and what getClusterKubeconfig and the cluster token derive from it. Nothing here logs or echoes a value: problems
 * name the field (`/users/0/user`), never its content.
 */

/** The largest kubeconfig accepted (the route's body limit is the same): real ones are a few kilobytes. */
export const KUBECONFIG_MAX_BYTES = 256 * 1024;

interface NamedEntry {
  name: string;
  [key: string]: unknown;
}

export interface Kubeconfig {
  clusters: NamedEntry[];
  users: NamedEntry[];
  contexts: NamedEntry[];
  'current-context'?: string;
  [key: string]: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The entries of one of the three lists, each a mapping with a name and a mapping under `field`. */
function namedEntries(config: Record<string, unknown>, list: 'clusters' | 'users' | 'contexts', field: string, problems: FieldProblem[]): NamedEntry[] {
  const value = config[list];
  if (!Array.isArray(value) || value.length === 0) {
    problems.push({ field: `/${list}`, message: `must be a non-empty list of ${list}` });
    return [];
  }
  const names = new Set<string>();
  value.forEach((entry: unknown, index) => {
    if (!isRecord(entry) || typeof entry.name !== 'string' || entry.name.trim() === '') {
      problems.push({ field: `/${list}/${index}/name`, message: 'must be a non-empty string' });
      return;
    }
    if (names.has(entry.name)) problems.push({ field: `/${list}/${index}/name`, message: `names ${list.slice(0, -1)} "${entry.name}" twice` });
    names.add(entry.name);
    if (!isRecord(entry[field])) problems.push({ field: `/${list}/${index}/${field}`, message: 'must be a mapping' });
  });
  return value.filter((entry): entry is NamedEntry => isRecord(entry) && typeof entry.name === 'string');
}

/**
 * Parses and checks a kubeconfig: YAML (JSON is YAML too) holding a mapping with non-empty `clusters` (each with a
 * `cluster.server`), `users` and `contexts` lists, contexts naming a listed cluster and user, and a `current-context`
 * naming a listed context. 400 naming each problem otherwise.
 */
export function parseKubeconfig(text: string): Kubeconfig {
  if (text.trim() === '') throw badRequest('the kubeconfig is empty', [{ field: '/', message: 'must be a kubeconfig in YAML' }]);
  const document = parseDocument(text, { uniqueKeys: true, prettyErrors: false });
  if (document.errors.length > 0) {
    const first = document.errors[0];
    const where = first?.linePos?.[0] === undefined ? '' : ` at line ${first.linePos[0].line}, column ${first.linePos[0].col}`;
    throw badRequest(`the kubeconfig is not valid YAML${where}: ${first?.code ?? 'syntax error'}`, [{ field: '/', message: 'must be valid YAML' }]);
  }
  let config: unknown;
  try {
    // Aliases are YAML's; a few are normal, a flood (a "billion laughs" document) is refused rather than expanded.
    config = document.toJS({ maxAliasCount: 100 });
  } catch {
    throw badRequest('the kubeconfig expands too many YAML aliases', [{ field: '/', message: 'too many aliases' }]);
  }
  if (!isRecord(config)) throw badRequest('the kubeconfig must be a YAML mapping', [{ field: '/', message: 'must be a mapping' }]);
  const problems: FieldProblem[] = [];
  if (config.kind !== undefined && config.kind !== 'Config') problems.push({ field: '/kind', message: 'must be Config' });
  const clusters = namedEntries(config, 'clusters', 'cluster', problems);
  const users = namedEntries(config, 'users', 'user', problems);
  const contexts = namedEntries(config, 'contexts', 'context', problems);
  clusters.forEach((entry, index) => {
    const cluster = entry.cluster;
    if (isRecord(cluster) && (typeof cluster.server !== 'string' || !/^https?:\/\/\S+$/.test(cluster.server))) {
      problems.push({ field: `/clusters/${index}/cluster/server`, message: 'must be the https:// address of the API server' });
    }
  });
  const clusterNames = new Set(clusters.map((entry) => entry.name));
  const userNames = new Set(users.map((entry) => entry.name));
  contexts.forEach((entry, index) => {
    const context = entry.context;
    if (!isRecord(context)) return;
    if (typeof context.cluster !== 'string' || !clusterNames.has(context.cluster)) {
      problems.push({ field: `/contexts/${index}/context/cluster`, message: 'must name a cluster of the list' });
    }
    if (typeof context.user !== 'string' || !userNames.has(context.user)) {
      problems.push({ field: `/contexts/${index}/context/user`, message: 'must name a user of the list' });
    }
  });
  const current = config['current-context'];
  if (current !== undefined && current !== '' && (typeof current !== 'string' || !contexts.some((entry) => entry.name === current))) {
    problems.push({ field: '/current-context', message: 'must name a context of the list' });
  }
  if (problems.length > 0) throw badRequest(`the kubeconfig is not usable: ${problems.map((problem) => `${problem.field} ${problem.message}`).join('; ')}`, problems);
  return config as Kubeconfig;
}

/** The context kubectl would use: the current one, else the first. */
function currentContext(config: Kubeconfig): NamedEntry | undefined {
  const named = config['current-context'];
  return config.contexts.find((entry) => entry.name === named) ?? config.contexts[0];
}

/** The bearer token of the current context's user; undefined when it authenticates otherwise (certificate, exec). */
export function currentUserToken(config: Kubeconfig): string | undefined {
  const context = currentContext(config)?.context;
  const userName = isRecord(context) ? context.user : undefined;
  const user = config.users.find((entry) => entry.name === userName)?.user;
  return isRecord(user) && typeof user.token === 'string' && user.token !== '' ? user.token : undefined;
}

/**
 * The kubeconfig with no credential in it: every user gets its token from Slipway when kubectl needs one, through
 * `get-cluster-token-by-clusterId`, which answers the ExecCredential kubectl expects. The exec runs curl with the
 * caller's API token from the environment (SLIPWAY_API_TOKEN), so the file itself holds nothing secret.
 */
export function kubeconfigWithTokenFromCli(config: Kubeconfig, tokenUrl: string): string {
  const exec = {
    apiVersion: 'client.authentication.k8s.io/v1beta1',
    command: 'sh',
    args: ['-c', `curl -fsS -H "Authorization: Token $SLIPWAY_API_TOKEN" '${tokenUrl}'`],
    env: null,
    interactiveMode: 'Never',
    provideClusterInfo: false,
  };
  return stringify({ ...config, users: config.users.map((entry) => ({ name: entry.name, user: { exec } })) });
}
