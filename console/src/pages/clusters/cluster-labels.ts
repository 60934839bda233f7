/** How the console names a cluster's kind and provider. */
export function kindLabel(kubernetes: string): string {
  return ({ LOCAL: 'Local (this host)', SELF_MANAGED: 'Self-managed', MANAGED: 'Managed', PARTIALLY_MANAGED: 'Partially managed' } as Record<string, string>)[kubernetes] ?? kubernetes;
}

export function providerLabel(provider: string): string {
  return ({ ON_PREMISE: 'On premise', AWS: 'AWS', GCP: 'Google Cloud', SCW: 'Scaleway', AZURE: 'Azure' } as Record<string, string>)[provider] ?? provider;
}
