import { Readable } from 'node:stream';
import { AddOptionsToSearchParams, ApiException, HttpMethod, RequestContext, type KubeConfig, type LogOptions } from '@kubernetes/client-node';
import { fetch } from 'undici';

/** The container whose log is read. */
export interface PodLogTarget {
  namespace: string;
  pod: string;
  container: string;
}

/**
 * A container's log (`GET …/pods/{pod}/log`) as a stream, as client-node's Log.log reads it, but cancellable from the
 * start. Log.log hands its AbortController out only once the answer's headers have come: a stop before that — a
 * kubelet that has not answered yet, or anything between the agent and the apiserver that holds the headers back
 * until the first line — could not cancel the request, and the agent's process stayed up until the log answered.
 * Here `signal` goes with the request itself. Any status but 200 is an ApiException with the apiserver's message.
 */
export async function openPodLog(config: KubeConfig, target: PodLogTarget, options: LogOptions, signal: AbortSignal): Promise<Readable> {
  const cluster = config.getCurrentCluster();
  if (cluster === null) throw new Error('the kubeconfig has no current cluster');
  const url = new URL(`${cluster.server}/api/v1/namespaces/${encodeURIComponent(target.namespace)}/pods/${encodeURIComponent(target.pod)}/log`);
  url.searchParams.set('container', target.container);
  AddOptionsToSearchParams(options, url.searchParams);
  const context = new RequestContext(url.toString(), HttpMethod.GET);
  await config.applySecurityAuthentication(context);
  const response = await fetch(url, { method: 'GET', headers: context.getHeaders(), dispatcher: context.getDispatcher(), signal });
  if (response.status !== 200 || response.body === null) {
    const text = await response.text().catch(() => '');
    let message = text;
    try {
      const status = JSON.parse(text) as { message?: unknown };
      if (typeof status.message === 'string') message = status.message;
    } catch {
      // Not a Status object: the text itself says what went wrong.
    }
    throw new ApiException(response.status, message === '' ? `the log answered ${response.status}` : message, text, {});
  }
  return Readable.fromWeb(response.body);
}
