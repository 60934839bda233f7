import { badRequest } from '../lib/errors.ts';

/**
 * What makes a repository URL one Slipway may point git at, before any network: the first step of every git
 * access (system-git.ts) and the check a service's git source meets when it is created or edited
 * (services.git-sources.ts), so that a URL the build would refuse is refused when it is written, with the same words.
 */

/** What an installation lets git reach (SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS, SLIPWAY_GIT_ALLOWED_HOSTS). */
export interface GitUrlPolicy {
  /** Plain http:// too, and loopback or private addresses. */
  allowPrivateHosts: boolean;
  /** Host names git may reach (`*.example.com` covers subdomains); empty allows any host. */
  allowedHosts: readonly string[];
}

/** `*.example.com` covers the subdomains of example.com, not example.com itself; other entries match exactly. */
export function hostAllowed(host: string, allowedHosts: readonly string[]): boolean {
  if (allowedHosts.length === 0) return true;
  const name = host.toLowerCase();
  return allowedHosts.some((pattern) => (pattern.startsWith('*.') ? name.endsWith(pattern.slice(1)) : name === pattern));
}

/**
 * The rules every installation applies: an absolute http(s) URL without credentials, query or fragment (credentials
 * belong in a git token, never in a URL that is stored, logged and shown). Problems name the field `/url`.
 */
export function parseRepositoryUrl(rawUrl: string): URL {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw badRequest('url is not an absolute https:// repository URL', [{ field: '/url', message: 'must be an https:// URL' }]);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw badRequest(`url must use https:// (got "${url.protocol}//")`, [{ field: '/url', message: 'must be an https:// URL' }]);
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw badRequest('url must not carry credentials, a query or a fragment; register a git token instead', [
      { field: '/url', message: 'must be a plain repository URL' },
    ]);
  }
  return url;
}

/**
 * The rules of this installation on top: https:// only unless private hosts are allowed (which is also what allows
 * http://), and a host of the allowed list when there is one. Whether the host's addresses are public is checked
 * where git connects (it needs name resolution, and the answer may change by then).
 */
export function checkRepositoryUrl(rawUrl: string, policy: GitUrlPolicy): URL {
  const url = parseRepositoryUrl(rawUrl);
  if (url.protocol === 'http:' && !policy.allowPrivateHosts) {
    throw badRequest('url must use https:// (got "http://"); plain http:// is allowed only when the installation sets SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS=true', [
      { field: '/url', message: 'must be an https:// URL' },
    ]);
  }
  if (!hostAllowed(url.hostname, policy.allowedHosts)) {
    throw badRequest(`git host ${url.hostname} is not one this installation may reach (SLIPWAY_GIT_ALLOWED_HOSTS)`, [
      { field: '/url', message: 'host is not allowed' },
    ]);
  }
  return url;
}
