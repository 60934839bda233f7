import type { Static, TSchema } from 'typebox';
import type { Queryable } from '../db/db.schema.ts';
import { schemaProblem } from '../protocol/wire.ts';
import type { Clock } from '../lib/clock.ts';
import { enqueueJob, type ClaimedJob, type JobRequest } from './job-queue.ts';
import type { JobHandler, JobOutcome } from './job-worker.ts';

/**
 * A job kind with the schema of its payload: the module that asks for the work enqueues a typed payload, and its
 * handler receives it parsed — the queue stores JSON, so what a handler reads is checked against the schema first
 * (a payload written by an older release, or by hand, fails the run naming the field rather than acting on a guess).
 * The worker's registry is a list of `handle(kind, …)` entries; no handler casts `job.payload`.
 */
export interface JobKind<T extends TSchema> {
  readonly kind: string;
  readonly payload: T;
}

export function jobKind<T extends TSchema>(kind: string, payload: T): JobKind<T> {
  return { kind, payload };
}

/** Enqueues a job of this kind (in the caller's transaction, as enqueueJob). */
export function enqueueJobOf<T extends TSchema>(db: Queryable, clock: Clock, kind: JobKind<T>, payload: Static<T>, options: Omit<JobRequest, 'kind' | 'payload'> = {}): Promise<string> {
  return enqueueJob(db, clock, { ...options, kind: kind.kind, payload: { ...(payload as Record<string, unknown>) } });
}

/** The payload of a claimed job of this kind, checked. */
export function payloadOf<T extends TSchema>(kind: JobKind<T>, job: Pick<ClaimedJob, 'id' | 'payload'>): Static<T> {
  const problem = schemaProblem(kind.payload, job.payload);
  if (problem === undefined) return job.payload as Static<T>;
  throw new Error(`job ${job.id} of kind ${kind.kind} has a payload its handler cannot read: ${problem}`);
}

export interface TypedJobHandler<T extends TSchema> {
  run(job: ClaimedJob, payload: Static<T>): Promise<JobOutcome>;
  giveUp?(job: ClaimedJob, error: string, payload: Static<T>): Promise<void>;
}

/** A worker registry entry: the kind's handler, given the parsed payload. */
export function handle<T extends TSchema>(kind: JobKind<T>, handler: TypedJobHandler<T>): readonly [string, JobHandler] {
  const giveUp = handler.giveUp;
  return [
    kind.kind,
    {
      run: (job) => handler.run(job, payloadOf(kind, job)),
      ...(giveUp === undefined ? {} : { giveUp: (job: ClaimedJob, error: string) => giveUp(job, error, payloadOf(kind, job)) }),
    },
  ];
}
