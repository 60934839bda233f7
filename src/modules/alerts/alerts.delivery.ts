import { isIP } from 'node:net';
import { resolveGitHost } from '../../git/git-addresses.ts';
import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import { createSmtpMailer } from '../../mail/smtp-mailer.ts';
import type { OutboundPolicy } from '../../registry/outbound-http.ts';
import type { WebhookSender } from '../webhooks/webhooks.sender.ts';
import { signWebhook } from '../webhooks/webhooks.signing.ts';
import type { WebhookFormat } from './alerts.schemas.ts';

/**
 * Sends one notification to one receiver and says whether it was taken. Webhooks go through the webhooks module's
 * sender (its outbound guard: https only and public addresses only unless SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS, checked
 * in the connection's own DNS lookup, no redirects, a timeout) and are signed as its deliveries are (Standard
 * Webhooks). E-mail goes through the mailer's SMTP transport to the receiver's own smarthost, connected to the
 * address the same guard checked (TLS still verifies the host's name). A failure is an answer, never a throw.
 */

export interface AlertNotification {
  /** FIRING and RESOLVED come from rules; TEST from a validation. */
  kind: 'FIRING' | 'RESOLVED' | 'TEST';
  subject: string;
  text: string;
  html: string;
  /** The structured alert of a GENERIC webhook's body. */
  payload: Record<string, unknown>;
}

export type OpenedReceiver =
  | { type: 'SLACK'; format: WebhookFormat; url: string; signingSecret: string }
  | { type: 'EMAIL'; to: string; from: string; smarthost: string; username: string | null; password: string | null; requireTls: boolean };

export interface DeliveryResult {
  delivered: boolean;
  message: string;
  responseStatus: number | null;
}

export interface AlertDelivery {
  deliver(receiver: OpenedReceiver, notification: AlertNotification, organizationId: string): Promise<DeliveryResult>;
}

const SMTP_TIMEOUT_MS = 10_000;
const SMTPS_PORT = 465;
const SMTP_PORT = 25;
const MAX_REASON_LENGTH = 300;

/** `host`, `host:port`, `[v6]` or `[v6]:port`; undefined when it is none of these. */
export function parseSmarthost(smarthost: string): { host: string; port: number } | undefined {
  const bracketed = /^\[([0-9A-Fa-f:.]+)\](?::(\d{1,5}))?$/.exec(smarthost);
  const plain = /^([^:[\]]+)(?::(\d{1,5}))?$/.exec(smarthost);
  const match = bracketed ?? plain;
  if (match === null || match[1] === undefined) return undefined;
  const port = match[2] === undefined ? SMTP_PORT : Number(match[2]);
  if (port < 1 || port > 65_535) return undefined;
  if (bracketed !== null && isIP(match[1]) !== 6) return undefined;
  return { host: match[1], port };
}

function smtpFailure(error: unknown, host: string): string {
  const { code, responseCode, response } = error as { code?: unknown; responseCode?: unknown; response?: unknown };
  if (typeof responseCode === 'number') {
    const said = typeof response === 'string' ? `: ${response.slice(0, MAX_REASON_LENGTH)}` : '';
    return `the SMTP server ${host} answered ${responseCode}${said}`;
  }
  if (code === 'ECONNREFUSED') return `${host} refused the connection`;
  if (code === 'ETIMEDOUT' || code === 'ETIMEOUT') return `${host} did not answer within ${SMTP_TIMEOUT_MS / 1000} s`;
  if (code === 'ESOCKET' || code === 'ECONNECTION') return `${host} could not be reached or closed the connection`;
  if (code === 'ETLS') return `TLS with ${host} failed`;
  if (code === 'EAUTH') return `${host} refused the credentials`;
  return `${host} could not be reached${typeof code === 'string' ? ` (${code})` : ''}`;
}

export function createAlertDelivery(deps: { policy: OutboundPolicy; sender: WebhookSender; clock: Clock }): AlertDelivery {
  async function sendWebhook(receiver: Extract<OpenedReceiver, { type: 'SLACK' }>, notification: AlertNotification, organizationId: string): Promise<DeliveryResult> {
    const messageId = newId();
    const now = deps.clock.now();
    const body =
      receiver.format === 'SLACK'
        ? JSON.stringify({ text: notification.text })
        : JSON.stringify({ id: messageId, type: `ALERT_${notification.kind}`, timestamp: now.toISOString(), organization_id: organizationId, ...notification.payload });
    const timestamp = Math.floor(now.getTime() / 1000);
    const result = await deps.sender.send(
      receiver.url,
      {
        'content-type': 'application/json',
        'user-agent': 'Slipway-Alerts/1',
        'webhook-id': messageId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signWebhook(receiver.signingSecret, messageId, timestamp, body),
      },
      body,
    );
    if (result.status !== null && result.status >= 200 && result.status < 300) return { delivered: true, message: `delivered (the receiver answered ${result.status})`, responseStatus: result.status };
    // The sender's own reasons name its field `target_url`; here it is the receiver's webhook_url.
    const reason = result.error?.replace(/^target_url /, 'webhook_url ') ?? `the receiver answered ${result.status}`;
    return { delivered: false, message: reason, responseStatus: result.status };
  }

  async function sendEmail(receiver: Extract<OpenedReceiver, { type: 'EMAIL' }>, notification: AlertNotification): Promise<DeliveryResult> {
    const target = parseSmarthost(receiver.smarthost);
    if (target === undefined) return { delivered: false, message: 'smarthost must be host or host:port', responseStatus: null };
    const resolved = await resolveGitHost(target.host, deps.policy.allowPrivateHosts);
    if (!resolved.ok) {
      const message =
        resolved.reason === 'unresolvable'
          ? `${target.host} could not be resolved`
          : `${target.host} is a loopback or private address; Slipway only reaches public hosts unless SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS=true`;
      return { delivered: false, message, responseStatus: null };
    }
    const scheme = target.port === SMTPS_PORT ? 'smtps' : 'smtp';
    const credentials =
      receiver.username === null || receiver.username === '' ? '' : `${encodeURIComponent(receiver.username)}:${encodeURIComponent(receiver.password ?? '')}@`;
    const address = isIP(resolved.address) === 6 ? `[${resolved.address}]` : resolved.address;
    const options = new URLSearchParams({
      // TLS verifies the name asked for, not the address connected to (a name is never an IP literal here).
      ...(isIP(target.host) === 0 ? { 'tls.servername': target.host } : {}),
      requireTLS: String(receiver.requireTls),
      connectionTimeout: String(SMTP_TIMEOUT_MS),
      greetingTimeout: String(SMTP_TIMEOUT_MS),
      socketTimeout: String(SMTP_TIMEOUT_MS),
    });
    const mailer = createSmtpMailer({ smtpUrl: `${scheme}://${credentials}${address}:${target.port}?${options.toString()}`, from: receiver.from });
    try {
      await mailer.send({ to: receiver.to, subject: notification.subject, text: notification.text, html: notification.html });
      return { delivered: true, message: `delivered to ${target.host}`, responseStatus: null };
    } catch (error) {
      return { delivered: false, message: smtpFailure(error, target.host), responseStatus: null };
    } finally {
      mailer.close();
    }
  }

  return {
    deliver(receiver, notification, organizationId) {
      return receiver.type === 'SLACK' ? sendWebhook(receiver, notification, organizationId) : sendEmail(receiver, notification);
    },
  };
}
