import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import { buildCatalog, CatalogInvalidError, parseRelease, parseRemoteDocument, type Catalog, type CatalogRelease } from './platform-templates.catalog.ts';

/**
 * Where the catalog comes from. `load` answers the checked catalog or throws an AppError: `internal` when the catalog
 * cannot be loaded (a malformed document: retrying will not help), `unavailable` when a remote source is temporarily
 * out of reach (retrying later will).
 */
export interface CatalogSource {
  load(): Promise<Catalog>;
}

/** The catalog shipped with Slipway: catalog/<templateKey>/<version>.json beside this file. */
export const BUNDLED_CATALOG_DIRECTORY = fileURLToPath(new URL('./catalog/', import.meta.url));

function cannotLoad(problem: string): AppError {
  return new AppError('internal', `the platform template catalog cannot be loaded: ${problem}`);
}

async function readDirectory(directory: string): Promise<CatalogRelease[]> {
  const releases: CatalogRelease[] = [];
  const templates = (await readdir(directory, { withFileTypes: true })).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();
  for (const templateKey of templates) {
    const files = (await readdir(path.join(directory, templateKey))).filter((name) => name.endsWith('.json')).sort();
    for (const file of files) {
      const origin = `${templateKey}/${file}`;
      let document: unknown;
      try {
        document = JSON.parse(await readFile(path.join(directory, templateKey, file), 'utf8'));
      } catch (error) {
        throw new CatalogInvalidError(`${origin}: not valid JSON (${error instanceof Error ? error.message : String(error)})`);
      }
      const release = parseRelease(document, origin);
      // The file's place names the release, so two files cannot silently claim the same key and version.
      if (release.key !== templateKey || `${release.version}.json` !== file) {
        throw new CatalogInvalidError(`${origin}: declares ${release.key}@${release.version}, expected ${templateKey}@${file.slice(0, -'.json'.length)}`);
      }
      releases.push(release);
    }
  }
  return releases;
}

/**
 * A catalog directory on this machine (the bundled one, or one named by a file:// SLIPWAY_TEMPLATE_CATALOG_URL).
 * Read once; a failed read is not remembered, so a fixed file is picked up by the next request.
 */
export function createDirectoryCatalogSource(directory: string): CatalogSource {
  let loaded: Catalog | undefined;
  return {
    async load() {
      if (loaded !== undefined) return loaded;
      try {
        loaded = buildCatalog(await readDirectory(directory), 'catalog');
      } catch (error) {
        if (error instanceof CatalogInvalidError) throw cannotLoad(error.message);
        const code = (error as NodeJS.ErrnoException).code;
        throw cannotLoad(`the catalog directory cannot be read${code === undefined ? '' : ` (${code})`}`);
      }
      return loaded;
    },
  };
}

export interface RemoteCatalogOptions {
  url: string;
  clock: Clock;
  /** How long a fetched catalog is served before it is fetched again. */
  ttlMs: number;
  /** How long one fetch may take before the source counts as unavailable. */
  timeoutMs: number;
}

/** Statuses that say "try again later" rather than "this URL will never serve a catalog". */
function isTemporary(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/**
 * A catalog served over HTTP(S) as `{ "releases": [...] }`. A fetched catalog is cached for ttlMs; concurrent
 * requests share one fetch. After the TTL the source is asked again and its answer decides: a stale catalog is not
 * served past its TTL, so an operator who withdraws a release sees it gone within the TTL. The URL is never put in
 * an error message (it may carry an access token in its query).
 */
export function createRemoteCatalogSource(options: RemoteCatalogOptions): CatalogSource {
  let cached: { catalog: Catalog; expiresAt: number } | undefined;
  let inFlight: Promise<Catalog> | undefined;

  async function fetchCatalog(): Promise<Catalog> {
    let response: Response;
    let body: string;
    try {
      response = await fetch(options.url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(options.timeoutMs) });
      body = await response.text();
    } catch (error) {
      const reason = error instanceof Error && error.name === 'TimeoutError' ? 'did not answer in time' : 'could not be reached';
      throw new AppError('unavailable', `the remote platform template catalog ${reason}; try again later`);
    }
    if (!response.ok) {
      if (isTemporary(response.status)) {
        throw new AppError('unavailable', `the remote platform template catalog is temporarily unavailable (it answered ${response.status}); try again later`);
      }
      throw cannotLoad(`the remote catalog source answered ${response.status}`);
    }
    let document: unknown;
    try {
      document = JSON.parse(body);
    } catch {
      throw cannotLoad('the remote catalog source answered a document that is not JSON');
    }
    try {
      return buildCatalog(parseRemoteDocument(document, 'remote catalog'), 'remote catalog');
    } catch (error) {
      if (error instanceof CatalogInvalidError) throw cannotLoad(error.message);
      throw error;
    }
  }

  return {
    async load() {
      const now = options.clock.now().getTime();
      if (cached !== undefined && now < cached.expiresAt) return cached.catalog;
      inFlight ??= fetchCatalog()
        .then((catalog) => {
          cached = { catalog, expiresAt: options.clock.now().getTime() + options.ttlMs };
          return catalog;
        })
        .finally(() => {
          inFlight = undefined;
        });
      return inFlight;
    },
  };
}

/** Default cache lifetime and fetch timeout of a remote catalog. */
export const REMOTE_CATALOG_TTL_MS = 5 * 60_000;
export const REMOTE_CATALOG_TIMEOUT_MS = 5_000;

/** The source named by SLIPWAY_TEMPLATE_CATALOG_URL: unset → bundled; file:// → that directory; http(s) → remote. */
export function catalogSourceFor(url: string | undefined, clock: Clock, remote: Partial<Pick<RemoteCatalogOptions, 'ttlMs' | 'timeoutMs'>> = {}): CatalogSource {
  if (url === undefined) return createDirectoryCatalogSource(BUNDLED_CATALOG_DIRECTORY);
  if (url.startsWith('file:')) return createDirectoryCatalogSource(fileURLToPath(url));
  return createRemoteCatalogSource({ url, clock, ttlMs: remote.ttlMs ?? REMOTE_CATALOG_TTL_MS, timeoutMs: remote.timeoutMs ?? REMOTE_CATALOG_TIMEOUT_MS });
}
