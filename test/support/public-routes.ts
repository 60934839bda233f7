/**
 * The routes that ask for no user credential, in one place for the tests that walk every route: the public IP list,
 * the installation CA's root certificate (docs/https.md),
 * the API description, the web console's pages, invoice PDFs and usage reports behind signed links (the signature is the credential,
 * docs/billing.md), and the cluster operator's side (its enrollment token, then its own credential, docs/clusters.md).
 */
export function isDocumentationRoute(url: string): boolean {
  return url === '/openapi.json' || url === '/docs' || url.startsWith('/docs/');
}

export function isSignedDownloadRoute(url: string): boolean {
  return url === '/billing/invoice/:id/pdf' || url === '/billing/usageReport/:id';
}

export function isOperatorRoute(url: string): boolean {
  return url.startsWith('/operator/v1/');
}

/** The web console's pages and files (docs/console.md), and `/`, which sends a browser to them: no API operation. */
export function isConsolePage(url: string): boolean {
  return url === '/' || url === '/console' || url.startsWith('/console/');
}

/** Where git providers deliver webhook events: each delivery is verified by its provider's signature (docs/git-webhooks.md). */
export function isGitWebhookDeliveryRoute(url: string): boolean {
  return url.startsWith('/git-webhook/');
}

/**
 * The Prometheus scrape endpoint (docs/operations.md, "What to watch: metrics"): no API operation, so outside the API
 * description, but not public either — it asks for the metrics token, and refuses any other credential with 401.
 */
export function isMetricsRoute(url: string): boolean {
  return url === '/metrics';
}

export function isPublicRoute(url: string): boolean {
  return (
    url === '/ips' || url === '/certificateAuthority' || isDocumentationRoute(url) || isConsolePage(url) || isSignedDownloadRoute(url) || isOperatorRoute(url) || isGitWebhookDeliveryRoute(url)
  );
}
