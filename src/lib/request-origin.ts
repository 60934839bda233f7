/**
 * The reference's origin of a request: the client it came through (API, CLI, console, Terraform provider), or
 * Slipway itself acting on a git push or on its own (a schedule, a job). Audit entries and deployment records carry it.
 */
export const REQUEST_ORIGINS = ['API', 'CLI', 'CONSOLE', 'GIT', 'PLATFORM_INTERNAL', 'SKILL', 'TERRAFORM_PROVIDER'] as const;
export type RequestOrigin = (typeof REQUEST_ORIGINS)[number];

/** Where an HTTP request came from, told by its User-Agent (the CLI and the Terraform provider name themselves). */
export function originOf(userAgent: string | undefined): RequestOrigin {
  if (userAgent === undefined) return 'API';
  if (/^slipway-cli\b/i.test(userAgent)) return 'CLI';
  if (/terraform/i.test(userAgent)) return 'TERRAFORM_PROVIDER';
  if (/^Mozilla\//.test(userAgent)) return 'CONSOLE';
  return 'API';
}
