import { createHash } from 'node:crypto';

/**
 * A service's public hostname (docs/services.md, "Public hostname"): `<label>.<SLIPWAY_APPS_DOMAIN>`, where the label
 * is `<service>-<environment>-<suffix>` and the suffix is 8 characters (40 bits, base32) of a SHA-256 of the
 * service's id. The names are for people; the suffix makes the label the service's own: another organization that
 * names its environment and service alike gets another suffix, so it can never take the hostname over, and the
 * services table's unique index refuses the rare candidate that collides anyway (the next attempt hashes
 * `<id>:<attempt>`).
 *
 * The control plane chooses the label once, when the service is created, and keeps it: renaming the service or its
 * environment changes nothing, since custom domains point their CNAME at the hostname (validation_domain). Drivers
 * only route the hostnames a task's spec names (`routing.hostnames`).
 */

/** One DNS label: 63 characters at most. */
const DNS_LABEL_MAX = 63;
const SUFFIX_LENGTH = 8;
const SUFFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

/** Lower-case letters, digits and single hyphens, none leading or trailing. */
function dnsLabel(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/-+/g, '-').replace(/^-|-$/g, '');
}

/** 8 base32 characters of SHA-256(`<id>` on the first attempt, `<id>:<attempt>` after). */
function suffixOf(serviceId: string, attempt: number): string {
  const digest = createHash('sha256').update(attempt === 0 ? serviceId : `${serviceId}:${attempt}`).digest();
  let bits = 0n;
  for (const byte of digest.subarray(0, 5)) bits = (bits << 8n) | BigInt(byte);
  let suffix = '';
  for (let index = SUFFIX_LENGTH - 1; index >= 0; index -= 1) suffix += SUFFIX_ALPHABET[Number((bits >> BigInt(index * 5)) & 31n)];
  return suffix;
}

/**
 * The label a service is offered on its `attempt` (0, then 1, … while another service holds the candidate). The
 * names are cut so that the label stays one DNS label with its suffix whole.
 */
export function hostnameLabelCandidate(service: { id: string; name: string }, environmentName: string, attempt: number): string {
  const prefix = dnsLabel(`${dnsLabel(service.name)}-${dnsLabel(environmentName)}`)
    .slice(0, DNS_LABEL_MAX - SUFFIX_LENGTH - 1)
    .replace(/-+$/, '');
  return `${prefix === '' ? 'service' : prefix}-${suffixOf(service.id, attempt)}`;
}

/** The hostname of a label under the installation's apps domain (a trailing dot or capitals in the setting are dropped). */
export function publicHostname(label: string, appsDomain: string): string {
  return `${label}.${appsDomain.toLowerCase().replace(/\.$/, '')}`;
}
