import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** One message as the SMTP server received it: the envelope and the raw RFC 5322 text. */
export interface ReceivedMail {
  from: string | undefined;
  to: string[];
  raw: string;
}

export interface TestSmtpServer {
  /** smtp://127.0.0.1:<port>, for the app's mailer. */
  url: string;
  received: ReceivedMail[];
  /** Resolves with the first message (received so far or later) that `matches`. */
  waitFor(matches: (mail: ReceivedMail) => boolean): Promise<ReceivedMail>;
  close(): Promise<void>;
}

/** A real SMTP server on a loopback port (plain SMTP, no authentication) that keeps every message it accepts. */
export async function startTestSmtpServer(): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const waiters: { matches: (mail: ReceivedMail) => boolean; resolve: (mail: ReceivedMail) => void }[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const mail: ReceivedMail = {
          from: session.envelope.mailFrom === false ? undefined : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((recipient) => recipient.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        };
        received.push(mail);
        for (const waiter of waiters.filter((candidate) => candidate.matches(mail))) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(mail);
        }
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    waitFor(matches) {
      const found = received.find(matches);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ matches, resolve }));
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
