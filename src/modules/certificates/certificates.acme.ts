import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';

/**
 * acme-client (with axios, node-forge and @peculiar/x509) takes 0.25 to 0.75 s to load: it is loaded at the first
 * order, not with the server, most of whose starts order nothing.
 */
type AcmeClient = typeof import('acme-client');
let loaded: Promise<AcmeClient> | undefined;
function acmeClient(): Promise<AcmeClient> {
  loaded ??= import('acme-client').then((module) => ('default' in module ? (module.default as AcmeClient) : module));
  return loaded;
}

/**
 * ACME (RFC 8555) issuance with acme-client (docs/https.md): one order per host name, validated by HTTP-01, which
 * the apps proxy answers on its HTTP port (`ChallengeResponder`). The client never verifies a challenge itself
 * before asking the CA (acme-client's `auto` would, through the system's resolver): whether the domain still points
 * here is asked before the order, through the installation's resolvers (SLIPWAY_DNS_SERVERS), by the caller.
 */

export interface AcmeSettings {
  directoryUrl: string;
  email: string | undefined;
  /** PEM certificates trusted for the ACME server's HTTPS (SLIPWAY_ACME_CA_BUNDLE's content); the system's when absent. */
  caBundle: string | undefined;
}

/** Publishes and withdraws HTTP-01 answers where the CA will ask for them (the apps proxy's HTTP port). */
export interface ChallengeResponder {
  setChallenge(token: string, keyAuthorization: string | undefined): Promise<void>;
}

export interface IssuedCertificate {
  /** The leaf and its intermediates (PEM). */
  chainPem: string;
  keyPem: string;
  notBefore: string;
  notAfter: string;
}

/** The installation's account: its key and, once registered, its URL at the CA. */
export interface AcmeAccount {
  keyPem: string;
  accountUrl: string | undefined;
}

/** Reads SLIPWAY_ACME_CA_BUNDLE's file (config.ts checked it is readable PEM at start). */
export function readCaBundle(file: string | undefined): string | undefined {
  return file === undefined ? undefined : readFileSync(file, 'utf8');
}

export async function createAccountKey(): Promise<string> {
  const acme = await acmeClient();
  return (await acme.crypto.createPrivateEcdsaKey('P-256')).toString();
}

/** The validity of the chain's first certificate (the leaf), as ISO-8601 instants. */
export function validityOf(chainPem: string): { notBefore: string; notAfter: string } {
  const leaf = new X509Certificate(chainPem);
  return { notBefore: new Date(leaf.validFrom).toISOString(), notAfter: new Date(leaf.validTo).toISOString() };
}

let configuredCa: string | undefined;

/**
 * acme-client talks HTTP through one axios instance of its module: the trust for the ACME server is set there. An
 * installation has one ACME directory, so one setting per process is what it needs.
 */
function trustForAcme(acme: AcmeClient, caBundle: string | undefined): void {
  if (caBundle === configuredCa) return;
  configuredCa = caBundle;
  acme.axios.defaults.httpsAgent = caBundle === undefined ? undefined : new Agent({ ca: caBundle, keepAlive: false });
}

/**
 * Registers (or finds again: the same key answers the same account) the account, orders a certificate for
 * `hostname`, answers its HTTP-01 challenge through `responder`, and answers the chain and its new key. Throws with
 * the CA's own reason (`detail` of its problem document) when the order fails.
 */
export async function orderCertificate(
  settings: AcmeSettings,
  account: AcmeAccount,
  hostname: string,
  responder: ChallengeResponder,
  /** Told the account's URL as soon as the CA gives it, so an order that fails afterwards does not lose it. */
  onAccountUrl: (accountUrl: string) => Promise<void>,
): Promise<IssuedCertificate> {
  const acme = await acmeClient();
  trustForAcme(acme, settings.caBundle);
  const client = new acme.Client({
    directoryUrl: settings.directoryUrl,
    accountKey: account.keyPem,
    ...(account.accountUrl === undefined ? {} : { accountUrl: account.accountUrl }),
    // How long a pending challenge or order is polled: 10 looks, 0.5 s doubling up to 5 s.
    backoffAttempts: 10,
    backoffMin: 500,
    backoffMax: 5_000,
  });
  if (account.accountUrl === undefined) {
    // The key may already have an account at this CA (an earlier order registered it, then failed before its URL
    // was kept): ask for it first, since registering again makes acme-client send an empty update, which a CA refuses.
    // The CA's answer when there is none is a problem document whose wording varies by CA; whatever the reason, the
    // registration below then either succeeds or fails with the CA's own message.
    const existing = await client.createAccount({ onlyReturnExisting: true }).then(
      () => true,
      () => false,
    );
    if (!existing) await client.createAccount({ termsOfServiceAgreed: true, ...(settings.email === undefined ? {} : { contact: [`mailto:${settings.email}`] }) });
    await onAccountUrl(client.getAccountUrl());
  }
  const order = await client.createOrder({ identifiers: [{ type: 'dns', value: hostname }] });
  for (const authorization of await client.getAuthorizations(order)) {
    if (authorization.status === 'valid') continue;
    const challenge = authorization.challenges.find((offered) => offered.type === 'http-01');
    if (challenge === undefined) throw new Error(`the CA offers no HTTP-01 challenge for ${authorization.identifier.value}`);
    const keyAuthorization = await client.getChallengeKeyAuthorization(challenge);
    await responder.setChallenge(challenge.token, keyAuthorization);
    try {
      await client.completeChallenge(challenge);
      await client.waitForValidStatus(challenge);
    } finally {
      await responder.setChallenge(challenge.token, undefined).catch(() => undefined);
    }
  }
  const [key, csr] = await acme.crypto.createCsr({ commonName: hostname, altNames: [hostname] }, await acme.crypto.createPrivateEcdsaKey('P-256'));
  const finalized = await client.finalizeOrder(order, csr);
  const chainPem = await client.getCertificate(finalized);
  return { chainPem, keyPem: key.toString(), ...validityOf(chainPem) };
}
