import type { ClaimedJob } from '../../jobs/job-queue.ts';
import type { JobHandler } from '../../jobs/job-worker.ts';
import type { WebhookDeliveryPayload, WebhooksService } from './webhooks.service.ts';

/**
 * The `webhook.delivery` job: one attempt per run. A failed attempt throws, so the worker puts the job back with
 * exponential backoff until its attempts are spent; the error names only the receiver's answer, never the secret.
 * The worker logs those failures at debug: the webhooks module logs a webhook's failing and recovering once each
 * (WebhooksDeps.log), not every attempt of every event while a receiver is down.
 */
export function createWebhookDeliveryHandler(webhooks: Pick<WebhooksService, 'attemptDelivery'>): JobHandler {
  return {
    failureLogLevel: 'debug',
    async run(job: ClaimedJob) {
      const error = await webhooks.attemptDelivery(job.payload as unknown as WebhookDeliveryPayload, job.attempt);
      if (error !== undefined) throw new Error(`webhook delivery failed: ${error}`);
    },
  };
}
