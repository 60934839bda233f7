import { expect } from 'vitest';
import { createClustersService } from '../../src/modules/clusters/clusters.service.ts';
import { uniqueName, type TestApp, type TestUser } from './test-app.ts';

/**
 * A self-managed cluster with its operator enrolled, written through the clusters module (no cloud account is
 * called): the credential an agent of that cluster uses over the agent protocol.
 */
export async function enrolledCluster(app: TestApp, organizationId: string, owner: TestUser): Promise<{ clusterId: string; credential: string }> {
  const { clusterId, enrollmentToken } = await clusterWithEnrollmentToken(app, organizationId, owner);
  const enroll = await app.call(undefined, { method: 'POST', url: '/operator/v1/enroll', payload: { enrollment_token: enrollmentToken } });
  expect(enroll.statusCode, enroll.body).toBe(200);
  return { clusterId, credential: enroll.json<{ credential: string }>().credential };
}

/** A self-managed cluster and the one-time enrollment token of its operator bootstrap, not used yet. */
export async function clusterWithEnrollmentToken(app: TestApp, organizationId: string, owner: TestUser): Promise<{ clusterId: string; enrollmentToken: string }> {
  const clusters = createClustersService({
    db: app.database.db,
    clock: app.clock,
    wakeWorkers: () => undefined,
    deletePlatformConfiguration: async () => undefined,
    publicUrl: 'http://127.0.0.1:8080',
    deploymentGate: async () => ({ allowed: true, reason: '' }),
    labelsGroups: { resolveLabelsGroups: async () => [] },
  });
  return app.database.db.transaction().execute((trx) =>
    clusters.createSelfManagedClusterRecords(trx, {
      organizationId,
      name: uniqueName('byo'),
      description: null,
      region: 'eu-west-3',
      credentialsId: '0190f0b2-6c5e-7000-8000-000000000001',
      dnsProvider: 'PLATFORM',
      buildProvider: 'PLATFORM',
      production: false,
      createdBy: { kind: 'user', userId: owner.id, email: owner.email, name: null },
    }),
  );
}
