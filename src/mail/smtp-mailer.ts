import nodemailer from 'nodemailer';
import type { Mailer, MailMessage } from './mailer.ts';

export interface SmtpMailer extends Mailer {
  close(): void;
}

/** Delivers through the SMTP relay at `smtpUrl` (smtp:// or smtps://, credentials in the URL). */
export function createSmtpMailer(options: { smtpUrl: string; from: string }): SmtpMailer {
  const transport = nodemailer.createTransport(options.smtpUrl);
  return {
    async send(message: MailMessage): Promise<void> {
      await transport.sendMail({
        from: options.from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        html: message.html,
        attachments: (message.attachments ?? []).map((file) => ({ filename: file.filename, contentType: file.contentType, content: file.content })),
      });
    },
    close: () => transport.close(),
  };
}
