/** The organization last opened in this browser (an id, nothing secret), where `/` goes next time. */
const KEY = 'slipway.console.organization';

export function rememberOrganization(organizationId: string): void {
  try {
    localStorage.setItem(KEY, organizationId);
  } catch {
    // Storage refused (private mode, quota): the first organization is opened instead.
  }
}

export function rememberedOrganization(): string | null {
  try {
    return localStorage.getItem(KEY);
  } catch {
    return null;
  }
}
