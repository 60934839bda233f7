import type { Static } from 'typebox';
import { notFound } from '../../lib/errors.ts';
import type { StoredPort } from './services.kind-fields.ts';
import type { StoredService } from './services.kinds.ts';
import type { Link } from './services.schemas.ts';

/**
 * Where a service is reached from outside: the reference's listApplicationLinks and listContainerLinks
 * (docs/services.md, "Public hostname"). A service with a public port has its public hostname as the default link,
 * then one link per custom domain whose DNS check passed (what the reverse proxy routes to it); a service without a
 * public port has none. The URL is the installation's apps proxy: HTTPS on SLIPWAY_APPS_HTTPS_PORT for a host name
 * it serves a certificate for (docs/https.md), else plain HTTP on SLIPWAY_APPS_PORT.
 *
 * The reference's Status has no field for a URL, so the status answers none: the links are where clients find it.
 */

export type LinkServiceKind = 'APPLICATION' | 'CONTAINER';

export interface ServiceLinksDeps {
  services: {
    /** 404 unless the id names a service of that kind (the authorizer already hid other organizations' ids). */
    requireService(kind: LinkServiceKind, serviceId: string): Promise<StoredService>;
    listEnvironmentServices(environmentId: string): Promise<StoredService[]>;
    publicHostnameOf(serviceId: string): Promise<string | undefined>;
  };
  /** The custom domains of the service whose DNS check passed. */
  verifiedDomainsOf(serviceId: string): Promise<string[]>;
  /** The port the apps proxy answers on: the in-process agent's once it listens, else SLIPWAY_APPS_PORT. */
  appsPort(): number;
  /** Where it serves HTTPS (SLIPWAY_APPS_HTTPS_PORT), and which host names it has a certificate for; none without. */
  https?: { port(): number | undefined; servedHostnames(hostnames: readonly string[]): Promise<Set<string>> };
}

/** The public port a host name reaches: the default port when it is public, else the first public one. */
function routedPort(service: StoredService): StoredPort | undefined {
  const ports = (service.settings as { ports?: StoredPort[] }).ports ?? [];
  const published = ports.filter((port) => port.publicly_accessible);
  return published.find((port) => port.is_default) ?? published[0];
}

export function urlOf(scheme: 'http' | 'https', host: string, port: number): string {
  return port === (scheme === 'http' ? 80 : 443) ? `${scheme}://${host}` : `${scheme}://${host}:${port}`;
}

const LINK_KINDS: ReadonlySet<string> = new Set<LinkServiceKind>(['APPLICATION', 'CONTAINER']);

export function createServiceLinks(deps: ServiceLinksDeps) {
  /** A service's links; undefined when it was deleted meanwhile. */
  async function linksOf(service: StoredService): Promise<Array<Static<typeof Link>> | undefined> {
    const port = routedPort(service);
    if (port === undefined) return [];
    const hostname = await deps.services.publicHostnameOf(service.id);
    if (hostname === undefined) return undefined;
    // A wildcard domain names many hosts, none of which is a URL to open.
    const domains = (await deps.verifiedDomainsOf(service.id)).filter((domain) => !domain.startsWith('*.'));
    const httpsPort = deps.https?.port();
    const secure = httpsPort === undefined || deps.https === undefined ? new Set<string>() : await deps.https.servedHostnames([hostname, ...domains]);
    const link = (host: string, platform: boolean): Static<typeof Link> => {
      const externalPort = httpsPort !== undefined && secure.has(host) ? httpsPort : deps.appsPort();
      return {
        service_id: service.id,
        service_type: service.kind as LinkServiceKind,
        url: urlOf(externalPort === httpsPort ? 'https' : 'http', host, externalPort),
        internal_port: port.internal_port,
        external_port: externalPort,
        is_platform_domain: platform,
        is_default: platform,
      };
    };
    return [link(hostname, true), ...domains.map((domain) => link(domain, false))];
  }

  return {
    async listServiceLinks(kind: LinkServiceKind, serviceId: string): Promise<Array<Static<typeof Link>>> {
      const links = await linksOf(await deps.services.requireService(kind, serviceId));
      if (links === undefined) throw notFound(`${kind.toLowerCase()} ${serviceId} not found`);
      return links;
    },

    /** The links of every application and container of the environment (listEnvironmentServicesLinks). */
    async listEnvironmentLinks(environmentId: string): Promise<Array<Static<typeof Link>>> {
      const services = (await deps.services.listEnvironmentServices(environmentId)).filter((service) => LINK_KINDS.has(service.kind));
      const links = await Promise.all(services.map(linksOf));
      return links.flatMap((list) => list ?? []);
    },
  };
}

export type ServiceLinks = ReturnType<typeof createServiceLinks>;
