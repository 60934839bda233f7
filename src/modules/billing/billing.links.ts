import { createHmac } from 'node:crypto';
import { deriveKey } from '../../lib/crypto.ts';
import { constantTimeEqual } from '../../lib/crypto.ts';

/**
 * Signed, expiring download links (invoice PDFs, usage reports). The link carries its expiry and an HMAC-SHA256 over
 * (purpose, resource id, expiry) under a key derived from the installation's secret key, so a link cannot be
 * stretched, pointed at another resource, or used for another purpose (a download link does not delete). Nothing
 * is stored per link.
 */
export type LinkPurpose = 'invoice-pdf' | 'usage-report' | 'usage-report-delete';

export interface SignedLinks {
  /** Query string `expires=…&signature=…` for the resource. */
  sign(purpose: LinkPurpose, resourceId: string, expiresAt: Date): string;
  /** 'valid', 'expired' (signed by us, past its time) or 'forged' (not signed by us, or altered). */
  verify(purpose: LinkPurpose, resourceId: string, expires: string | undefined, signature: string | undefined, now: Date): 'valid' | 'expired' | 'forged';
}

const KEY_LABEL = 'slipway/billing-links/v1';

export function createSignedLinks(secretKey: Buffer): SignedLinks {
  const linkKey = deriveKey(secretKey, KEY_LABEL);

  function signatureOf(purpose: LinkPurpose, resourceId: string, expiresEpoch: string): string {
    return createHmac('sha256', linkKey).update(`${purpose}\n${resourceId}\n${expiresEpoch}`).digest('base64url');
  }

  return {
    sign(purpose, resourceId, expiresAt) {
      const expires = String(Math.floor(expiresAt.getTime() / 1000));
      return `expires=${expires}&signature=${signatureOf(purpose, resourceId, expires)}`;
    },
    verify(purpose, resourceId, expires, signature, now) {
      if (expires === undefined || signature === undefined || !/^\d{1,12}$/.test(expires)) return 'forged';
      if (!constantTimeEqual(signature, signatureOf(purpose, resourceId, expires))) return 'forged';
      return Number(expires) * 1000 <= now.getTime() ? 'expired' : 'valid';
    },
  };
}
