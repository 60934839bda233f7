import autocannon from 'autocannon';

/**
 * One benchmark phase: a warm-up run whose figures are discarded (JIT, connection set-up, SQLite page cache), then
 * the measured run. Only answers with the expected status count as throughput and latency; anything else is
 * reported beside them, so a phase that fails fast cannot look fast.
 */

export interface LoadSettings {
  connections: number;
  warmupSeconds: number;
  seconds: number;
  /**
   * Requests per second over all connections (autocannon's `overallRate`): a fixed offered load, for latency at a
   * given rate. Unset: every connection sends its next request as soon as the last one is answered (saturation).
   */
  overallRate?: number;
}

export interface PhaseRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  /** Called for every request sent; when given, each request carries the body it returns. */
  body?: () => string;
  /** The one status that counts as success. */
  okStatus: number;
}

export interface Measurement {
  seconds: number;
  /** Answers with the expected status. */
  ok: number;
  okPerSecond: number;
  /** Latency percentiles of the answers with the expected status, in milliseconds. */
  p50Ms: number;
  p99Ms: number;
  /** Answers with any other status, by status. */
  otherStatuses: Record<string, number>;
  /** Connection errors and timeouts: requests without an answer. */
  errors: number;
  /** CPU time the server process spent per answered request, in microseconds (NaN when it cannot be read). */
  serverCpuMicrosPerRequest: number;
}

/** Nearest-rank percentile of ascending samples. */
function percentile(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

/** What a phase runs against: the server's address, its CPU counter, and the run's cancellation. */
export interface PhaseTarget {
  baseUrl: string;
  /** CPU time of the server process so far, in microseconds; undefined when it cannot be read. */
  serverCpuMicros: () => number | undefined;
  /** Aborted on Ctrl-C: a run in progress stops at once and no further run starts. */
  signal: AbortSignal;
}

/**
 * autocannon's own histogram records whole milliseconds, too coarse for sub-millisecond answers; the response
 * event carries the exact duration, so the latencies are collected here instead.
 */
function run(target: PhaseTarget, request: PhaseRequest, connections: number, seconds: number, overallRate: number | undefined): Promise<Measurement> {
  target.signal.throwIfAborted();
  const latencies: number[] = [];
  let answered = 0;
  const cpuBefore = target.serverCpuMicros();
  const otherStatuses: Record<string, number> = {};
  const body = request.body;
  const options: autocannon.Options = {
    url: target.baseUrl,
    connections,
    duration: seconds,
    pipelining: 1,
    ...(overallRate === undefined ? {} : { overallRate }),
    requests: [
      {
        method: request.method,
        path: request.path,
        headers: request.headers ?? {},
        ...(body === undefined ? {} : { setupRequest: (sent: autocannon.Request) => ({ ...sent, body: body() }) }),
      },
    ],
  };
  return new Promise((resolve, reject) => {
    const stop = (): void => instance.stop();
    const instance = autocannon(options, (error: unknown, result: autocannon.Result) => {
      target.signal.removeEventListener('abort', stop);
      if (error !== null && error !== undefined) {
        reject(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      if (target.signal.aborted) {
        reject(target.signal.reason instanceof Error ? target.signal.reason : new Error('interrupted'));
        return;
      }
      const cpuAfter = target.serverCpuMicros();
      const sorted = Float64Array.from(latencies).sort();
      resolve({
        seconds: result.duration,
        ok: sorted.length,
        okPerSecond: sorted.length / result.duration,
        p50Ms: percentile(sorted, 0.5),
        p99Ms: percentile(sorted, 0.99),
        otherStatuses,
        errors: result.errors,
        serverCpuMicrosPerRequest:
          cpuBefore === undefined || cpuAfter === undefined || answered === 0 ? Number.NaN : (cpuAfter - cpuBefore) / answered,
      });
    });
    target.signal.addEventListener('abort', stop, { once: true });
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      answered++;
      if (statusCode === request.okStatus) {
        latencies.push(responseTime);
      } else {
        const key = String(statusCode);
        otherStatuses[key] = (otherStatuses[key] ?? 0) + 1;
      }
    });
  });
}

const NO_WARMUP: Measurement = {
  seconds: 0,
  ok: 0,
  okPerSecond: 0,
  p50Ms: Number.NaN,
  p99Ms: Number.NaN,
  otherStatuses: {},
  errors: 0,
  serverCpuMicrosPerRequest: Number.NaN,
};

/** The warm-up's figures are returned too: a phase that writes must account for what its warm-up stored. */
export async function measurePhase(
  target: PhaseTarget,
  request: PhaseRequest,
  settings: LoadSettings,
): Promise<{ warmup: Measurement; measured: Measurement }> {
  const { connections, overallRate } = settings;
  const warmup = settings.warmupSeconds > 0 ? await run(target, request, connections, settings.warmupSeconds, overallRate) : NO_WARMUP;
  const measured = await run(target, request, connections, settings.seconds, overallRate);
  return { warmup, measured };
}
