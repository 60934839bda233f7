import { randomBytes, webcrypto } from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import { GeneralName, GeneralSubtree, GeneralSubtrees, NameConstraints } from '@peculiar/asn1-x509';
import * as x509 from '@peculiar/x509';
import { PRIVATE_SUFFIXES } from '../../lib/public-domains.ts';
import type { IssuedCertificate } from './certificates.acme.ts';

/**
 * The installation's own certificate authority, for the names no public CA issues for (`*.localhost`, `.internal`,
 * `.test`: lib/public-domains.ts), as Caddy's internal issuer does: one root, created at first use, whose key is
 * sealed in the database like the ACME account's; leaves signed by it directly, for one name each, short-lived and
 * renewed by the certificates schedule. A developer trusts the root once (the API and `slipway https ca` give it)
 * and every local service answers over HTTPS without warnings.
 *
 * The root is name-constrained (RFC 5280 §4.2.1.10, critical) to those private suffixes: whoever trusted it is not
 * exposed for any public name, even if the database and the installation's key leaked together.
 */

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 60 * 60 * 1000;
/** The root lasts ten years; a leaf 30 days, renewed from 10 days before it ends. */
const ROOT_DAYS = 3650;
const LEAF_DAYS = 30;
export const INSTALLATION_CA_RENEW_BEFORE_MS = 10 * DAY_MS;

x509.cryptoProvider.set(globalThis.crypto);

export interface InstallationRoot {
  certificatePem: string;
  keyPem: string;
}

function serialNumber(): string {
  // 16 random bytes, the top bit cleared: a positive INTEGER (RFC 5280 §4.1.2.2).
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString('hex');
}

async function exportKeyPem(key: webcrypto.CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key));
  return `-----BEGIN PRIVATE KEY-----\n${der.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END PRIVATE KEY-----\n`;
}

async function importKeyPem(pem: string): Promise<webcrypto.CryptoKey> {
  const der = Buffer.from(pem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, ''), 'base64');
  return webcrypto.subtle.importKey('pkcs8', der, ALGORITHM, false, ['sign']);
}

function nameConstraints(): x509.Extension {
  const permitted = new GeneralSubtrees(PRIVATE_SUFFIXES.map((suffix) => new GeneralSubtree({ base: new GeneralName({ dNSName: suffix }) })));
  return new x509.Extension('2.5.29.30', true, AsnConvert.serialize(new NameConstraints({ permittedSubtrees: permitted })));
}

/** A new root: self-signed, a CA for leaves only (path length 0), name-constrained. */
export async function createInstallationRoot(installationName: string, now: Date): Promise<InstallationRoot> {
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: `CN=${installationName} installation CA, O=Slipway`,
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(now.getTime() + ROOT_DAYS * DAY_MS),
    signingAlgorithm: ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      nameConstraints(),
    ],
  });
  return { certificatePem: certificate.toString('pem'), keyPem: await exportKeyPem(keys.privateKey) };
}

/** A leaf for one name, signed by the root: the chain served is the leaf, then the root. */
export async function issueFromInstallationRoot(root: InstallationRoot, hostname: string, now: Date): Promise<IssuedCertificate> {
  const issuer = new x509.X509Certificate(root.certificatePem);
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const notBefore = new Date(now.getTime() - 60_000);
  const notAfter = new Date(now.getTime() + LEAF_DAYS * DAY_MS);
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: `CN=${hostname}`,
    issuer: issuer.subject,
    notBefore,
    notAfter,
    signingAlgorithm: ALGORITHM,
    publicKey: keys.publicKey,
    signingKey: await importKeyPem(root.keyPem),
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: hostname }]),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(issuer),
    ],
  });
  return {
    chainPem: `${leaf.toString('pem')}\n${root.certificatePem}`,
    keyPem: await exportKeyPem(keys.privateKey),
    notBefore: notBefore.toISOString(),
    notAfter: notAfter.toISOString(),
  };
}
