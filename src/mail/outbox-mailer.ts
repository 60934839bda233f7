import type { Kysely } from 'kysely';
import type { DB } from '../db/db.schema.ts';
import { isoTimestamp, type Clock } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import type { Mailer, MailMessage } from './mailer.ts';

export interface OutboxLog {
  info(fields: Record<string, unknown>, message: string): void;
}

/**
 * Without an SMTP relay, mail is kept in the `outbox` table and logged with its plain-text body (which carries any
 * link, such as an invitation's), so an operator of a fresh installation can still hand the link on.
 */
export function createOutboxMailer(deps: { db: Kysely<DB>; clock: Clock; log?: OutboxLog }): Mailer {
  return {
    async send(message: MailMessage): Promise<void> {
      await deps.db
        .insertInto('outbox')
        .values({
          id: newId(),
          recipient: message.to,
          subject: message.subject,
          text_body: message.text,
          html_body: message.html,
          created_at: isoTimestamp(deps.clock),
        })
        .execute();
      // The outbox keeps text only: attachments are named in the log, and their sender can produce them again.
      const attachments = (message.attachments ?? []).map((file) => file.filename);
      deps.log?.info({ to: message.to, subject: message.subject, text: message.text, attachments }, 'mail kept in the outbox (no SMTP relay configured)');
    },
  };
}
