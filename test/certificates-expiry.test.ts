import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretBox } from '../src/lib/secret-box.ts';
import { createInstallationRoot, issueFromInstallationRoot } from '../src/modules/certificates/certificates.installation-ca.ts';
import { createCertificatesService, type ServedCertificate } from '../src/modules/certificates/certificates.service.ts';
import { openTestDatabase, TEST_DIALECTS, type TestDatabase } from './support/databases.ts';
import { TestClock } from './support/test-app.ts';

/**
 * A certificate that expires unrenewed (docs/https.md, "Failures and retries"): the renewal schedule's dropExpired
 * gives the apps proxy the set without it, so its name falls back to plain HTTP, and the certificate's state says why.
 * The apps proxy's side is a recording port here (the real proxy is test/https-proxy.test.ts's); the certificates,
 * their keys and the database are real.
 */
for (const dialect of TEST_DIALECTS) {
  describe(`an expired certificate stops being served [${dialect}]`, () => {
    let database: TestDatabase;
    const clock = new TestClock();
    const published: ServedCertificate[][] = [];
    const secrets = createSecretBox(randomBytes(32));

    beforeAll(async () => {
      database = await openTestDatabase(dialect);
    });
    afterAll(async () => {
      await database?.dispose();
    });

    it('drops it at its expiry, keeps the others, and says why on the certificate', async () => {
      const certificates = createCertificatesService({
        db: database.database.db,
        clock,
        secrets,
        acme: { directoryUrl: 'https://acme.invalid/directory', email: undefined, caBundle: undefined },
        configured: true,
        issuerOf: () => 'installation-ca',
        installationName: 'test',
        proxy: () => ({
          setChallenge: async () => undefined,
          setCertificates: async (served) => void published.push([...served]),
        }),
        domains: { subject: async () => undefined, problemPointingHere: async () => undefined },
        audit: async () => undefined,
        wakeWorkers: () => undefined,
        log: { warn: () => undefined, info: () => undefined },
      });
      const root = await createInstallationRoot('test', clock.now());
      const rows = [];
      for (const [hostname, days] of [['old.internal', 1], ['fresh.internal', 30]] as const) {
        const issued = await issueFromInstallationRoot(root, hostname, clock.now());
        const id = crypto.randomUUID();
        const notAfter = new Date(clock.now().getTime() + days * 86_400_000).toISOString();
        rows.push({ id, hostname });
        await database.database.db
          .insertInto('certificates')
          .values({
            id,
            hostname,
            custom_domain_id: null,
            service_id: null,
            status: 'ERROR',
            last_error: 'the domain does not point here any more: it resolves to 10.9.9.9',
            chain_pem: issued.chainPem,
            key_sealed: secrets.seal(issued.keyPem, `certificate:${id}`),
            not_before: issued.notBefore,
            not_after: notAfter,
            issued_at: issued.notBefore,
            failures: 1,
            next_attempt_at: notAfter,
            created_at: issued.notBefore,
            updated_at: issued.notBefore,
          })
          .execute();
      }
      await certificates.publish();
      expect(published.at(-1)?.map((served) => served.hostnames[0]).sort()).toEqual(['fresh.internal', 'old.internal']);

      // Before its expiry nothing changes; after it, the proxy is given the set without it.
      expect(await certificates.dropExpired()).toBe(0);
      clock.advance(2 * 86_400_000);
      expect(await certificates.dropExpired()).toBe(1);
      expect(published.at(-1)?.map((served) => served.hostnames[0])).toEqual(['fresh.internal']);
      const old = await database.database.db.selectFrom('certificates').selectAll().where('hostname', '=', 'old.internal').executeTakeFirstOrThrow();
      expect(old).toMatchObject({ status: 'ERROR', chain_pem: null, key_sealed: null });
      expect(old.last_error).toContain('expired');
      expect(old.last_error).toContain('served over plain HTTP');
      expect(old.last_error).toContain('10.9.9.9');
      // Once dropped, it is not dropped again.
      expect(await certificates.dropExpired()).toBe(0);
    });
  });
}
