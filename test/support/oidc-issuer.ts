import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

/**
 * A real OpenID Connect issuer for tests, on an http:// loopback address: a discovery document and a JWKS served
 * over HTTP, and RS256 ID tokens signed with its current key. `rotateKey` makes a new key current (the old one
 * stays published) so tests can exercise JWKS refetching.
 */
export interface TestIssuer {
  issuer: string;
  audience: string;
  signToken(claims: TokenClaims, options?: SignOptions): Promise<string>;
  rotateKey(options?: { dropOld?: boolean }): Promise<void>;
  /** Requests served, by path, to observe caching. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

export interface TokenClaims {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  picture?: string;
}

export interface SignOptions {
  /** Seconds from now; negative for an expired token. */
  expiresIn?: number;
  notBefore?: number;
  audience?: string;
  issuer?: string;
  /** Sign with a key the issuer does not publish. */
  foreignKey?: boolean;
}

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function newSigningKey(kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

export async function startTestIssuer(audience = 'slipway-test'): Promise<TestIssuer> {
  let keys: SigningKey[] = [await newSigningKey('k1')];
  const foreign = await newSigningKey('k1');
  const hits = new Map<string, number>();
  let issuer = '';

  const server: Server = createServer((request, response) => {
    const path = request.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    response.setHeader('content-type', 'application/json');
    if (path === '/.well-known/openid-configuration') {
      response.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks`, id_token_signing_alg_values_supported: ['RS256'] }));
    } else if (path === '/jwks') {
      response.end(JSON.stringify({ keys: keys.map((key) => key.publicJwk) }));
    } else {
      response.statusCode = 404;
      response.end('{}');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    issuer,
    audience,
    hits,
    async signToken(claims, options = {}) {
      const key = options.foreignKey === true ? foreign : (keys[keys.length - 1] as SigningKey);
      const now = Math.floor(Date.now() / 1000);
      const jwt = new SignJWT({ ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: key.kid })
        .setIssuer(options.issuer ?? issuer)
        .setAudience(options.audience ?? audience)
        .setIssuedAt(now)
        .setExpirationTime(now + (options.expiresIn ?? 3600));
      if (options.notBefore !== undefined) jwt.setNotBefore(now + options.notBefore);
      return jwt.sign(key.privateKey);
    },
    async rotateKey(options = {}) {
      const next = await newSigningKey(`k${keys.length + 1}`);
      keys = options.dropOld === true ? [next] : [...keys, next];
    },
    close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
