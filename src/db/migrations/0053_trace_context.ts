import type { Kysely } from 'kysely';

/**
 * The trace a job or an agent task continues (docs/operations.md, "Traces"): the W3C `traceparent` of the span that
 * was active when the row was written — a request's, for the job it enqueued; a job run's, for the task it dispatched
 * — so the job's run and the agent's work are spans of the request's trace. Null for rows written with tracing off.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('trace_context', 'text').execute();
  await db.schema.alterTable('agent_tasks').addColumn('trace_context', 'text').execute();
}
