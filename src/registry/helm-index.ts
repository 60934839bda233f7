import { parse } from 'yaml';
import { RegistryAccessError, type RegistryCredentials } from './oci-distribution.ts';
import type { OutboundHttp } from './outbound-http.ts';

/**
 * Reading an HTTPS Helm chart repository: its `index.yaml` (the file `helm repo index` writes and `helm repo add`
 * reads) lists every chart under `entries`, each with its released versions, newest first by convention.
 */
export interface HelmChartVersions {
  chart_name: string;
  versions: string[];
}

/** Indexes of large public repositories run to tens of megabytes (bitnami's was ~20 MB before it was trimmed). */
const MAX_INDEX_BYTES = 64 * 1024 * 1024;

/** The charts and versions of an index.yaml, charts sorted by name, versions in the index's order. */
export function parseHelmIndex(text: string): HelmChartVersions[] {
  let document: unknown;
  try {
    // Aliases are bounded: a "billion laughs" index could otherwise expand without limit. The failsafe schema keeps
    // every scalar a string, so a version written `1.10` stays "1.10" instead of becoming the number 1.1.
    document = parse(text, { maxAliasCount: 1000, schema: 'failsafe' });
  } catch (error) {
    throw new RegistryAccessError('protocol', `index.yaml is not valid YAML: ${error instanceof Error ? error.message.split('\n')[0] : 'parse error'}`);
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new RegistryAccessError('protocol', 'index.yaml is not a Helm repository index (not a mapping)');
  }
  const entries = (document as { entries?: unknown }).entries;
  if (entries === undefined || entries === null) return [];
  if (typeof entries !== 'object' || Array.isArray(entries)) throw new RegistryAccessError('protocol', 'index.yaml: "entries" is not a mapping');
  const charts: HelmChartVersions[] = [];
  for (const [chartName, releases] of Object.entries(entries as Record<string, unknown>)) {
    if (!Array.isArray(releases)) continue;
    const versions: string[] = [];
    for (const release of releases) {
      const version = (release as { version?: unknown } | null)?.version;
      if (typeof version === 'string' && !versions.includes(version)) versions.push(version);
    }
    charts.push({ chart_name: chartName, versions });
  }
  return charts.sort((a, b) => (a.chart_name < b.chart_name ? -1 : a.chart_name > b.chart_name ? 1 : 0));
}

export interface HelmIndexLocation {
  /** The repository URL as registered (`https://charts.example.com/stable`); index.yaml is read below it. */
  url: string;
  credentials?: RegistryCredentials | undefined;
  insecureTls?: boolean | undefined;
}

export function indexUrlOf(repositoryUrl: string): string {
  return `${repositoryUrl.replace(/\/+$/, '')}/index.yaml`;
}

export function createHelmIndexReader(http: OutboundHttp) {
  async function readIndex(location: HelmIndexLocation): Promise<HelmChartVersions[]> {
    const credentials = location.credentials;
    const response = await http.get({
      url: indexUrlOf(location.url),
      headers: {
        accept: 'application/x-yaml, text/yaml, */*',
        ...(credentials === undefined ? {} : { authorization: `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`, 'utf8').toString('base64')}` }),
      },
      insecureTls: location.insecureTls === true,
      maxBytes: MAX_INDEX_BYTES,
    });
    if (response.status === 401 || response.status === 403) {
      throw new RegistryAccessError(
        'unauthorized',
        credentials === undefined ? `the repository requires credentials (${response.status})` : `the repository refused the credentials (${response.status})`,
      );
    }
    if (response.status === 404) throw new RegistryAccessError('not_found', 'the repository has no index.yaml (404)');
    if (response.status !== 200) throw new RegistryAccessError('protocol', `GET index.yaml answered ${response.status}`);
    return parseHelmIndex(response.body.toString('utf8'));
  }
  return { readIndex };
}

export type HelmIndexReader = ReturnType<typeof createHelmIndexReader>;
