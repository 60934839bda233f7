/** The installation's ACME account at one directory (migrations/0033_certificates.ts). */
export interface AcmeAccountsTable {
  directory_url: string;
  email: string | null;
  /** The account's private key (PEM), sealed with the installation's secret key. */
  key_sealed: string;
  /** The account's URL at the CA (its `kid`), once registered. */
  account_url: string | null;
  created_at: string;
}

/** A TLS certificate the apps proxy serves for one host name (migrations/0033_certificates.ts). */
export interface CertificatesTable {
  id: string;
  hostname: string;
  /** The verified custom domain it is for; the row goes with it. */
  custom_domain_id: string | null;
  /** Or the service whose own host name it is for (migrations/0036_service_certificates.ts); the row goes with it. */
  service_id: string | null;
  /** PENDING, ISSUED or ERROR (with last_error). */
  status: string;
  last_error: string | null;
  /** The leaf and its intermediates (PEM), as the CA sent them. */
  chain_pem: string | null;
  /** Its private key (PEM), sealed, bound to the row's id. */
  key_sealed: string | null;
  not_before: string | null;
  not_after: string | null;
  issued_at: string | null;
  /** Failed orders in a row (the backoff of the next attempt). */
  failures: number;
  /** When the renewal schedule may order again: backoff after a failure, or 30 days before expiry. */
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
}

/** The installation's own certificate authority: its one root (migrations/0037_installation_ca.ts). */
export interface InstallationCaTable {
  /** `root`. */
  id: string;
  certificate_pem: string;
  /** Its private key (PEM), sealed, bound to `installation-ca`. */
  key_sealed: string;
  not_after: string;
  created_at: string;
}

/**
 * What a cluster that obtains its own certificates (a Kubernetes agent with `--cert-manager-issuer`) last reported of
 * one of its hostnames (migrations/0045_agent_certificates.ts); the row goes with the cluster.
 */
export interface AgentCertificatesTable {
  cluster_id: string;
  hostname: string;
  /** PENDING, ISSUED (with expires_at) or ERROR (with error). */
  status: string;
  error: string | null;
  expires_at: string | null;
  reported_at: string;
}
