import { AsyncLocalStorage } from 'node:async_hooks';
import type {
  CompiledQuery,
  DatabaseConnection,
  DatabaseIntrospector,
  Dialect,
  DialectAdapter,
  Driver,
  Kysely,
  QueryCompiler,
  TransactionSettings,
} from 'kysely';

/**
 * Lets work that is not the transaction's own ride on its commit: a participant found through the async context
 * that opened the transaction runs its statements on the transaction's connection just before COMMIT, so they
 * commit, or roll back, with the change. The audit log uses it (src/http/audit.ts): the event of a write request
 * is written in the same transaction as the write, with no service having to know about it.
 *
 * The participant travels with the async context, so whatever runs later from a request's context carries it too;
 * work that must not (the job worker's runs woken by a request) starts under `outsideCommitParticipants`.
 */
export interface CommitParticipant {
  /** Runs on the committing connection before COMMIT; throwing rolls the transaction back. */
  beforeCommit(execute: (query: CompiledQuery) => Promise<unknown>): Promise<void>;
}

const participants = new AsyncLocalStorage<CommitParticipant>();

/** Runs `work` (and everything it starts) with `participant` taking part in each transaction it commits. */
export function withCommitParticipant<T>(participant: CommitParticipant, work: () => T): T {
  return participants.run(participant, work);
}

/** Runs `work` (and everything it starts) with no participant, whatever the calling context carries. */
export function outsideCommitParticipants<T>(work: () => T): T {
  return participants.exit(work);
}

class ParticipatingDriver implements Driver {
  private readonly inner: Driver;
  constructor(inner: Driver) {
    this.inner = inner;
  }

  init(): Promise<void> {
    return this.inner.init();
  }

  acquireConnection(): Promise<DatabaseConnection> {
    return this.inner.acquireConnection();
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(connection, settings);
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const participant = participants.getStore();
    if (participant !== undefined) await participant.beforeCommit((query) => connection.executeQuery(query));
    await this.inner.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(connection);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(connection);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/** `dialect` with commit participants: the same adapter, compiler and introspector, its driver wrapped. */
export function withCommitParticipants(dialect: Dialect): Dialect {
  return {
    createAdapter: (): DialectAdapter => dialect.createAdapter(),
    createDriver: (): Driver => new ParticipatingDriver(dialect.createDriver()),
    createQueryCompiler: (): QueryCompiler => dialect.createQueryCompiler(),
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    createIntrospector: (db: Kysely<any>): DatabaseIntrospector => dialect.createIntrospector(db),
  };
}
