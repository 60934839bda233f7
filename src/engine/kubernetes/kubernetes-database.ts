import type { StatefulSet } from 'kubernetes-types/apps/v1.js';
import type { EnvVar, Secret, Service } from 'kubernetes-types/core/v1.js';
import type { SpecDatabase } from '../../protocol/agent-protocol.ts';
import { ANNOTATION_RESTARTED_AT, contentHash, ANNOTATION_CONFIG_HASH, namespaceOf, podSelector, serviceLabels, workloadNameOf, type ServiceIdentity } from './kubernetes-names.ts';
import type { DatabaseSettings } from './kubernetes-settings.ts';
import { base64, cpuQuantity, memoryQuantity, type KubeObject } from './kubernetes-workload.ts';

/**
 * A DATABASE in container mode as Kubernetes objects (docs/kubernetes.md, "What each kind becomes"): the engine's
 * official image at the service's version, run by a StatefulSet of one instance with a claim for its data.
 *
 *   Secret <name>-credentials   the engine's credential variables (POSTGRES_*, MYSQL_*, MONGO_INITDB_*, REDIS_PASSWORD)
 *   StatefulSet <name>          one instance; claim template `data` of the settings' storage; ready when its port accepts
 *   Service <name>              the engine's port: `<name>.<namespace>.svc.cluster.local` is the database's host, the
 *                               name the intent hostname resolves to (clusterResolver)
 *   Service <name>-headless     the StatefulSet's governing Service (the instance's own stable DNS name)
 *
 * The credentials are those the control plane generated (the spec's `database` section), so the connection
 * variables it gives the other services of the environment are right. The engine reads them only when it
 * initializes an empty volume: the claim outlives redeployments, and so do the first credentials.
 */

export const MANAGED_DATABASE_MESSAGE = 'no cloud provisioner is configured for managed databases on this cluster: a MANAGED database cannot be deployed here (a CONTAINER database can)';

interface Engine {
  image: string;
  port: number;
  /** Where the engine keeps its data: the claim is mounted there. */
  dataPath: string;
  env(database: SpecDatabase): Record<string, string>;
  args?: string[];
}

const ENGINES: Record<DatabaseSettings['type'], Engine> = {
  POSTGRESQL: {
    image: 'postgres',
    port: 5432,
    dataPath: '/var/lib/postgresql/data',
    // A fresh volume may hold lost+found, which initdb refuses: the cluster lives in a directory below the mount.
    env: (database) => ({ POSTGRES_USER: database.username, POSTGRES_PASSWORD: database.password, POSTGRES_DB: database.database_name, PGDATA: '/var/lib/postgresql/data/pgdata' }),
  },
  MYSQL: {
    image: 'mysql',
    port: 3306,
    dataPath: '/var/lib/mysql',
    // The root password is the user's: one secret to keep, and the user can administer its own server.
    env: (database) => ({ MYSQL_USER: database.username, MYSQL_PASSWORD: database.password, MYSQL_DATABASE: database.database_name, MYSQL_ROOT_PASSWORD: database.password }),
  },
  MONGODB: {
    image: 'mongo',
    port: 27017,
    dataPath: '/data/db',
    env: (database) => ({ MONGO_INITDB_ROOT_USERNAME: database.username, MONGO_INITDB_ROOT_PASSWORD: database.password, MONGO_INITDB_DATABASE: database.database_name }),
  },
  REDIS: {
    image: 'redis',
    port: 6379,
    dataPath: '/data',
    env: (database) => ({ REDIS_PASSWORD: database.password }),
    // Redis has no credential variable: the password is given on its command line, from the Secret through the
    // environment ($(VAR) is expanded by the kubelet), and the data is kept in an append-only file on the claim.
    args: ['--requirepass', '$(REDIS_PASSWORD)', '--appendonly', 'yes'],
  },
};

/** The engine's port: what the Service serves and the spec's internal endpoint declares. */
export function databasePortOf(type: DatabaseSettings['type']): number {
  return ENGINES[type].port;
}

export interface DatabaseRender {
  service: ServiceIdentity;
  deploymentId: string;
  settings: DatabaseSettings;
  database: SpecDatabase;
  restartedAt: string | undefined;
}

export function renderDatabase(render: DatabaseRender): KubeObject[] {
  const { service, settings, database } = render;
  const engine = ENGINES[settings.type];
  const name = workloadNameOf(service);
  const namespace = namespaceOf(service.environmentId);
  const labels = serviceLabels(service);
  const metadata = (objectName: string) => ({ name: objectName, namespace, labels });
  const credentials = engine.env(database);
  const secretName = `${name}-credentials`;
  const secret: Secret & KubeObject = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: metadata(secretName),
    type: 'Opaque',
    data: Object.fromEntries(Object.entries(credentials).map(([key, value]) => [key, base64(value)])),
  };
  // Each variable by name rather than envFrom: the redis argument's $(REDIS_PASSWORD) needs it declared in `env`.
  const env: EnvVar[] = Object.keys(credentials).map((key) => ({ name: key, valueFrom: { secretKeyRef: { name: secretName, key } } }));
  const port = engine.port;
  const statefulSet: StatefulSet & KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: metadata(name),
    spec: {
      replicas: 1,
      serviceName: `${name}-headless`,
      selector: { matchLabels: podSelector(service.id) },
      template: {
        metadata: {
          labels,
          annotations: {
            [ANNOTATION_CONFIG_HASH]: contentHash(Object.entries(credentials).map(([key, value]) => `${key}=${value}`)),
            ...(render.restartedAt === undefined ? {} : { [ANNOTATION_RESTARTED_AT]: render.restartedAt }),
          },
        },
        spec: {
          containers: [
            {
              name: 'main',
              image: `${engine.image}:${database.version}`,
              ...(engine.args === undefined ? {} : { args: engine.args }),
              ports: [{ name: 'db', containerPort: port, protocol: 'TCP' }],
              env,
              resources: {
                requests: { cpu: cpuQuantity(settings.cpu), memory: memoryQuantity(settings.memory) },
                limits: { cpu: cpuQuantity(settings.cpu), memory: memoryQuantity(settings.memory) },
              },
              readinessProbe: { tcpSocket: { port }, initialDelaySeconds: 5, periodSeconds: 5, timeoutSeconds: 2, failureThreshold: 6 },
              volumeMounts: [{ name: 'data', mountPath: engine.dataPath }],
            },
          ],
          enableServiceLinks: false,
          automountServiceAccountToken: false,
        },
      },
      volumeClaimTemplates: [{ metadata: { name: 'data', labels }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: `${settings.storage}Gi` } } } }],
    },
  };
  const ports = [{ name: 'db', port, targetPort: port, protocol: 'TCP' }];
  const clusterService: Service & KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: metadata(name), spec: { selector: podSelector(service.id), ports } };
  const headless: Service & KubeObject = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: metadata(`${name}-headless`),
    spec: { clusterIP: 'None', selector: podSelector(service.id), ports },
  };
  return [secret, statefulSet, clusterService, headless];
}
