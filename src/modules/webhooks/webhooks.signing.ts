import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): `webhook-signature: v1,<base64 HMAC-SHA256 of
 * "<webhook-id>.<webhook-timestamp>.<body>">`. A secret Slipway generates is `whsec_` + base64 of 24 random bytes,
 * and its key is those bytes, as the specification's libraries expect; a secret a user chose is used as its UTF-8
 * bytes unless it has that same form.
 */
export const SECRET_PREFIX = 'whsec_';

export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(24).toString('base64')}`;
}

export function signingKeyOf(secret: string): Buffer {
  if (secret.startsWith(SECRET_PREFIX)) {
    const encoded = secret.slice(SECRET_PREFIX.length);
    if (/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) return Buffer.from(encoded, 'base64');
  }
  return Buffer.from(secret, 'utf8');
}

export function signWebhook(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const digest = createHmac('sha256', signingKeyOf(secret)).update(`${messageId}.${timestampSeconds}.${body}`, 'utf8').digest('base64');
  return `v1,${digest}`;
}
