import { createServer } from 'node:net';
import { buildApp } from '../../src/app.ts';
import type { SignUpMode } from '../../src/config.ts';
import type { FastifyTypeBox } from '../../src/http/fastify.types.ts';
import { openTestDatabase, type TestDatabase, type TestDialect } from './databases.ts';
import { formAction, TestBrowser } from './identity-browser.ts';

/**
 * The application with its built-in identity provider (no external issuer), listening on a real loopback port,
 * for tests that speak HTTP to it as a browser or the CLI would.
 */
export interface IdentityTestApp {
  app: FastifyTypeBox;
  database: TestDatabase['database'];
  /** http://127.0.0.1:<port> */
  baseUrl: string;
  /** `${baseUrl}/oidc` */
  issuer: string;
  /** Verification links mailed to `email`, oldest first. */
  verificationLinks(email: string): Promise<string[]>;
  /** Creates an account through the sign-up form and follows its verification link. */
  createVerifiedAccount(email: string, password: string): Promise<void>;
  close(): Promise<void>;
}

/** A port free at the moment: the issuer URL must be known before the app is built, so the port is chosen first. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => {
        if (address === null || typeof address === 'string') reject(new Error('no port'));
        else resolve(address.port);
      });
    });
  });
}

/** `signUp` is SLIPWAY_SIGNUP: the server's default (invite) unless given. */
export async function startIdentityTestApp(dialect: TestDialect, options: { signUp?: SignUpMode } = {}): Promise<IdentityTestApp> {
  const testDatabase = await openTestDatabase(dialect);
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const app = await buildApp({
    config: { oidc: undefined, egressIps: [], logLevel: 'silent', publicUrl: baseUrl, ...(options.signUp === undefined ? {} : { signUp: options.signUp }) },
    database: testDatabase.database,
  });
  await app.listen({ host: '127.0.0.1', port });

  /** Without an SMTP relay the verification mail waits in the outbox table; its text carries the link. */
  async function verificationLinks(email: string): Promise<string[]> {
    const mails = await testDatabase.database.db.selectFrom('outbox').select(['text_body', 'created_at']).where('recipient', '=', email).orderBy('created_at').orderBy('id').execute();
    return mails.flatMap((mail) => [...mail.text_body.matchAll(/https?:\/\/\S+\/oidc\/verify\?token=\S+/g)].map((match) => match[0]));
  }

  return {
    app,
    database: testDatabase.database,
    baseUrl,
    issuer: `${baseUrl}/oidc`,
    verificationLinks,
    async createVerifiedAccount(email, password) {
      const browser = new TestBrowser();
      const form = await browser.get(`${baseUrl}/oidc/signup`);
      const action = formAction(form.body, form.url);
      if (action === undefined) throw new Error('no sign-up form');
      const created = await browser.post(action, { email, password, name: email.split('@')[0] ?? email });
      if (created.status !== 201) throw new Error(`sign-up answered ${created.status}: ${created.body}`);
      const link = (await verificationLinks(email)).at(-1);
      if (link === undefined) throw new Error('no verification mail in the outbox');
      const verified = await browser.get(link);
      if (verified.status !== 200) throw new Error(`verification answered ${verified.status}`);
    },
    async close() {
      await app.close();
      await testDatabase.dispose();
    },
  };
}
