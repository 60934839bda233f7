import type { ReceivedMail } from './smtp-server.ts';

/**
 * The readable text of a raw message as an SMTP server received it: quoted-printable soft line breaks and escapes
 * undone (nodemailer encodes long lines that way), so links can be found in it as a person would see them.
 */
export function decodedMailText(mail: ReceivedMail): string {
  return mail.raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_whole, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** The distinct links in a message that match `pattern` (HTML-escaped ampersands read as plain ones). */
export function linksIn(mail: ReceivedMail, pattern: RegExp): string[] {
  const links = [...decodedMailText(mail).matchAll(/https?:\/\/[^\s"<>]+/g)].map((match) => match[0].replaceAll('&amp;', '&'));
  return [...new Set(links.filter((link) => pattern.test(link)))];
}
