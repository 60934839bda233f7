/** A file sent with a message (an invoice PDF, for instance). */
export interface MailAttachment {
  filename: string;
  contentType: string;
  content: Buffer;
}

/** One outgoing e-mail, always with a plain-text and an HTML body. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
  attachments?: MailAttachment[];
}

/** The mailer port: services hand messages to it and know nothing of how they leave the process. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/** Escapes text for an HTML body, so names and addresses chosen by users cannot inject markup into a message. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}
