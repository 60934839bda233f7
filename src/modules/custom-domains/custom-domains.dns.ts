import { Resolver } from 'node:dns/promises';

/**
 * The DNS questions a custom domain check asks, behind a port: the server asks real resolvers (the system's, or
 * SLIPWAY_DNS_SERVERS), tests point the same implementation at a DNS server of their own. A name that does not
 * exist or has no record of the type answers an empty list; any other failure (timeout, SERVFAIL, refused) throws.
 */
export interface DomainResolver {
  /** The canonical names a CNAME record at `name` points to (without the trailing dot). */
  cname(name: string): Promise<string[]>;
  /** The IPv4 and IPv6 addresses `name` resolves to. */
  addresses(name: string): Promise<string[]>;
  /** The TXT records at `name`, each one's strings joined. */
  txt(name: string): Promise<string[]>;
}

const ABSENT = new Set(['ENOTFOUND', 'ENODATA', 'NXDOMAIN', 'ENONAME']);

async function orEmpty<T>(question: Promise<T[]>): Promise<T[]> {
  try {
    return await question;
  } catch (error) {
    if (ABSENT.has((error as NodeJS.ErrnoException).code ?? '')) return [];
    throw error;
  }
}

export interface NodeResolverOptions {
  /** `ip` or `ip:port`; empty = the system's resolvers. */
  servers: readonly string[];
  timeoutMs?: number;
  tries?: number;
}

export function createNodeDomainResolver(options: NodeResolverOptions): DomainResolver {
  const resolver = new Resolver({ timeout: options.timeoutMs ?? 2000, tries: options.tries ?? 2 });
  if (options.servers.length > 0) resolver.setServers([...options.servers]);
  const bare = (name: string) => name.toLowerCase().replace(/\.$/, '');
  return {
    async cname(name) {
      return (await orEmpty(resolver.resolveCname(name))).map(bare);
    },
    async addresses(name) {
      const [v4, v6] = await Promise.all([orEmpty(resolver.resolve4(name)), orEmpty(resolver.resolve6(name))]);
      return [...v4, ...v6];
    },
    async txt(name) {
      return (await orEmpty(resolver.resolveTxt(name))).map((chunks) => chunks.join(''));
    },
  };
}
