import type { Transporter } from 'nodemailer';
import type { Mailer, MailMessage } from './mailer.ts';

export interface SmtpMailer extends Mailer {
  close(): void;
}

/**
 * Delivers through the SMTP relay at `smtpUrl` (smtp:// or smtps://, credentials in the URL). nodemailer loads with
 * the first message, not at start.
 */
export function createSmtpMailer(options: { smtpUrl: string; from: string }): SmtpMailer {
  let transport: Promise<Transporter> | undefined;
  const transportOf = (): Promise<Transporter> =>
    (transport ??= import('nodemailer').then(({ default: nodemailer }) => nodemailer.createTransport(options.smtpUrl)));
  return {
    async send(message: MailMessage): Promise<void> {
      await (await transportOf()).sendMail({
        from: options.from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        html: message.html,
        attachments: (message.attachments ?? []).map((file) => ({ filename: file.filename, contentType: file.contentType, content: file.content })),
      });
    },
    close: () => void transport?.then((opened) => opened.close()),
  };
}
