/**
 * Whether a DNS name can be public: not under a special-use or private-use name no public CA issues for — RFC 6761
 * (`localhost`, `test`, `invalid`, `example`), RFC 6762 (`local`), RFC 8375 (`home.arpa`), ICANN's private-use
 * `internal`, and the informal `lan`, `corp`, `home` that resolve nowhere on the Internet. Bare IP addresses are not
 * names a certificate is ordered for either.
 */
export const PRIVATE_SUFFIXES = ['localhost', 'test', 'invalid', 'example', 'local', 'home.arpa', 'internal', 'lan', 'corp', 'home'] as const;

export function isPublicDomainName(name: string): boolean {
  const domain = name.toLowerCase().replace(/\.$/, '');
  if (domain === '' || !domain.includes('.')) return false;
  if (/^[\d.]+$/.test(domain) || domain.includes(':')) return false;
  return !PRIVATE_SUFFIXES.some((suffix) => domain === suffix || domain.endsWith(`.${suffix}`));
}
