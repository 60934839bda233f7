/**
 * Internal hostnames (`<name>.<environment id>.slipway.internal`) are how the control plane names the services of an
 * environment, whatever the driver (docs/decisions.md, "Placement"). Each driver writes where a name leads on its
 * cluster in place of the name, wherever a workload's variables hold it: the local driver an address of its own,
 * the Kubernetes driver the Service's in-cluster DNS name.
 *
 * A name is replaced only where it stands as a whole hostname — not the tail of a longer one (`api.<env>…` inside
 * `my-api.<env>…`), nor the head of one (`…slipway.internal.example.com`) — case-insensitively, longest names first.
 */
export function internalHostnameResolver(targets: ReadonlyMap<string, () => string>): (value: string) => string {
  const byHostname = new Map([...targets].map(([hostname, target]) => [hostname.toLowerCase(), target]));
  if (byHostname.size === 0) return (value) => value;
  const names = [...byHostname.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp);
  const pattern = new RegExp(`(?<![A-Za-z0-9.-])(?:${names.join('|')})(?![A-Za-z0-9-]|\\.[A-Za-z0-9])`, 'gi');
  return (value) => value.replace(pattern, (hostname) => byHostname.get(hostname.toLowerCase())?.() ?? hostname);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
