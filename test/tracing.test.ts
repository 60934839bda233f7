import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAgentClient } from '../src/agent/agent.client.ts';
import { ConfigError, loadConfig } from '../src/config.ts';
import { startAgent } from '../src/agent/agent.runtime.ts';
import { startTracing } from '../src/lib/tracing.ts';
import type { AgentDriver } from '../src/protocol/agent-driver.ts';
import type { AgentTask } from '../src/protocol/agent-protocol.ts';
import { TEST_DIALECTS } from './support/databases.ts';
import { freePort } from './support/identity-app.ts';
import { killProcessesUnder } from './support/sample-apps.ts';
import { startSlipwayServer, type SlipwayServer } from './support/slipway-process.ts';

/**
 * Issue 26 part 5, traces: a real `slipway server` exporting to a small OTLP/HTTP receiver (JSON bodies) shows one
 * trace from a request through the job it enqueued to the agent task that job dispatched, each span the child of the
 * one before; continues the trace of an incoming `traceparent`; exports nothing secret; and, with tracing off, sends
 * the receiver nothing at all.
 */
const STEP_TIMEOUT_MS = 180_000;

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
}

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean | undefined>;
  status: { code?: number } | undefined;
  resource: Record<string, string | number | boolean | undefined>;
}

interface OtlpReceiver {
  url: string;
  spans(): ReceivedSpan[];
  /** Every request body received, as sent. */
  bodies(): string[];
  close(): Promise<void>;
}

function attributesOf(list: OtlpAttribute[] | undefined): Record<string, string | number | boolean | undefined> {
  const out: Record<string, string | number | boolean | undefined> = {};
  for (const { key, value } of list ?? []) {
    out[key] = value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue)) ?? value.boolValue ?? value.doubleValue;
  }
  return out;
}

/** OTLP/JSON ids are hex; an exporter writing protobuf's base64 form would fail the comparisons loudly. */
function hexId(id: string | undefined): string | undefined {
  return id === undefined || id === '' ? undefined : id.toLowerCase();
}

/** An OTLP/HTTP receiver: `POST /v1/traces` with JSON bodies, every span kept with its resource's attributes. */
async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const bodies: string[] = [];
  const spans: ReceivedSpan[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/traces' || !(request.headers['content-type'] ?? '').includes('json')) {
        response.writeHead(404).end();
        return;
      }
      bodies.push(body);
      const parsed = JSON.parse(body) as {
        resourceSpans?: Array<{
          resource?: { attributes?: OtlpAttribute[] };
          scopeSpans?: Array<{ spans?: Array<{ traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: OtlpAttribute[]; status?: { code?: number } }> }>;
        }>;
      };
      for (const resourceSpans of parsed.resourceSpans ?? []) {
        const resource = attributesOf(resourceSpans.resource?.attributes);
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              traceId: hexId(span.traceId) ?? '',
              spanId: hexId(span.spanId) ?? '',
              parentSpanId: hexId(span.parentSpanId),
              name: span.name,
              kind: span.kind,
              attributes: attributesOf(span.attributes),
              status: span.status,
              resource,
            });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the receiver has no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    spans: () => [...spans],
    bodies: () => [...bodies],
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

type TracedServer = SlipwayServer & { organizationId: string; apiToken: string };

function apiOf(server: () => TracedServer) {
  return async function api<T>(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: T }> {
    const response = await fetch(`${server().baseUrl}${url}`, {
      method,
      headers: { authorization: `Token ${server().apiToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: (text === '' ? {} : JSON.parse(text)) as T };
  };
}

/** A project with an environment on a new LOCAL cluster (no services: its deploy is one environment task). */
async function localEnvironment(api: ReturnType<typeof apiOf>, organizationId: string, name: string): Promise<{ clusterId: string; environmentId: string }> {
  const created = async (url: string, body: unknown) => {
    const response = await api<{ id: string }>('POST', url, body);
    expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);
    return response.body.id;
  };
  const projectId = await created(`/organization/${organizationId}/project`, { name });
  const clusterId = await created(`/organization/${organizationId}/cluster`, { name, region: 'local', cloud_provider: 'ON_PREMISE', kubernetes: 'LOCAL' });
  return { clusterId, environmentId: await created(`/project/${projectId}/environment`, { name, cluster: clusterId, mode: 'DEVELOPMENT' }) };
}

function waitFor<T>(read: () => T | undefined, what: string): Promise<T> {
  return vi.waitFor(
    () => {
      const value = read();
      expect(value, `timed out waiting for ${what}`).toBeDefined();
      return value as T;
    },
    { timeout: STEP_TIMEOUT_MS - 30_000, interval: 100 },
  );
}

/**
 * A control plane that offers one task, carrying `traceparent`, and records the `traceparent` header of every report:
 * what a `slipway agent` meets over HTTP, with nothing else of Slipway's around it.
 */
async function startTaskOffer(task: AgentTask): Promise<{ url: string; reportTraceparents(): Array<string | undefined>; settled: Promise<void>; close(): Promise<void> }> {
  let offered = false;
  const reports: Array<string | undefined> = [];
  let settle: () => void = () => undefined;
  const settled = new Promise<void>((resolve) => (settle = resolve));
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const answer = (status: number, value: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
      const path = (request.url ?? '').split('?')[0];
      if (path === '/operator/v1/heartbeat') return answer(200, { server_time: new Date().toISOString(), heartbeat_interval_seconds: 60, lease_seconds: 60 });
      if (path === '/operator/v1/tasks') {
        const tasks = offered ? [] : [task];
        offered = true;
        return tasks.length > 0 ? answer(200, { tasks }) : void setTimeout(() => answer(200, { tasks: [] }), 200);
      }
      if (path === `/operator/v1/tasks/${task.id}/progress`) {
        reports.push(request.headers.traceparent as string | undefined);
        const report = JSON.parse(body) as { event: string };
        if (report.event === 'succeed') settle();
        return answer(200, { applied: true, task_status: report.event === 'succeed' ? 'DONE' : 'LEASED', subject_status: null });
      }
      return answer(404, { status: 404, error: 'Not Found', message: `${path} is not served here` });
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the control plane has no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    reportTraceparents: () => [...reports],
    settled,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('the tracing configuration', () => {
  const tracingOf = (env: Record<string, string>) => loadConfig({ SLIPWAY_DATA_DIR: '/tmp/slipway-tracing-config', ...env }).tracing;
  const refusal = (env: Record<string, string>) => {
    try {
      tracingOf(env);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
    throw new Error('the configuration was accepted');
  };

  it('is off without an endpoint, or with OTEL_SDK_DISABLED=true', () => {
    expect(tracingOf({})).toBeUndefined();
    expect(tracingOf({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toBeUndefined();
    expect(tracingOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'TRUE' })).toBeUndefined();
  });

  it('appends /v1/traces to the base endpoint and takes the traces endpoint as given', () => {
    expect(tracingOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual({ tracesUrl: 'http://collector:4318/v1/traces', serviceName: undefined });
    expect(tracingOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example.com/otlp/', OTEL_SERVICE_NAME: 'slipway-eu' })).toEqual({
      tracesUrl: 'https://otel.example.com/otlp/v1/traces',
      serviceName: 'slipway-eu',
    });
    expect(
      tracingOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://ignored:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/custom/traces', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }),
    ).toEqual({ tracesUrl: 'http://collector:4318/custom/traces', serviceName: undefined });
  });

  it('refuses what it cannot honour, naming the variable', () => {
    expect(refusal({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:99999' })).toMatch(/^OTEL_EXPORTER_OTLP_ENDPOINT: must be an http\(s\) URL/);
    expect(refusal({ OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://collector' })).toMatch(/^OTEL_EXPORTER_OTLP_ENDPOINT: must use http/);
    const withPassword = refusal({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://user:s3cret@collector/v1/traces' });
    expect(withPassword).toMatch(/^OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: must not carry credentials/);
    expect(withPassword).not.toContain('s3cret');
    expect(refusal({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toMatch(/^OTEL_EXPORTER_OTLP_PROTOCOL: must be http\/json/);
    expect(refusal({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toMatch(
      /^OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: must be http\/json/,
    );
    expect(refusal({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'yes' })).toMatch(/^OTEL_SDK_DISABLED: must be true or false/);
    expect(refusal({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SERVICE_NAME: 'a\nb' })).toMatch(/^OTEL_SERVICE_NAME: /);
  });
});

describe('an agent over HTTP', () => {
  it('carries a task out as a child span of the traceparent it came with, and its reports continue that span', { timeout: STEP_TIMEOUT_MS }, async () => {
    const receiver = await startOtlpReceiver();
    const traceId = randomBytes(16).toString('hex');
    const jobSpanId = randomBytes(8).toString('hex');
    const environmentId = randomUUID();
    const task: AgentTask = {
      id: randomUUID(),
      subject_type: 'ENVIRONMENT',
      subject_id: environmentId,
      deployment_id: randomUUID(),
      action: 'deploy',
      payload: { environment_id: environmentId, action: 'deploy' },
      lease_id: randomUUID(),
      lease_expires_at: new Date(Date.now() + 60_000).toISOString(),
      attempt: 1,
      last_report_seq: 0,
      last_log_seq: 0,
      accepts_logs: false,
      traceparent: `00-${traceId}-${jobSpanId}-01`,
    };
    const controlPlane = await startTaskOffer(task);
    // This test file's own process traces, as `slipway agent` does with OTEL_EXPORTER_OTLP_ENDPOINT set.
    const tracing = await startTracing({ tracesUrl: `${receiver.url}/v1/traces`, serviceName: 'slipway-agent', serviceVersion: 'test' });
    const unused = async () => {
      throw new Error('an environment task needs no driver');
    };
    const driver: AgentDriver = { name: 'none', serviceKinds: [], deploy: unused, stop: unused, teardown: unused };
    const agent = startAgent({ client: createAgentClient({ controlPlaneUrl: controlPlane.url, credential: 'slwo_test' }), driver, version: 'test', pollWaitSeconds: 1 });
    try {
      await controlPlane.settled;
    } finally {
      await agent.stop();
      // Exports what is buffered.
      await tracing.shutdown();
      await controlPlane.close();
      await receiver.close();
    }
    const span = receiver.spans().find((candidate) => candidate.name === 'agent task deploy');
    expect(span, JSON.stringify(receiver.spans().map((candidate) => candidate.name))).toBeDefined();
    expect(span?.traceId).toBe(traceId);
    expect(span?.parentSpanId).toBe(jobSpanId);
    expect(span?.resource['service.name']).toBe('slipway-agent');
    expect(span?.attributes).toMatchObject({ 'slipway.task.id': task.id, 'slipway.task.outcome': 'succeed', 'slipway.agent.driver': 'none' });
    // take, built, succeed: each sent in the task's span.
    expect(controlPlane.reportTraceparents()).toEqual([1, 2, 3].map(() => `00-${traceId}-${span?.spanId}-01`));
    expect(receiver.bodies().join('\n')).not.toContain('slwo_test');
  });
});

for (const dialect of TEST_DIALECTS) {
  describe(`traces from a request to its job and its agent task [${dialect}]`, () => {
    let receiver: OtlpReceiver;
    let server: TracedServer;
    const api = apiOf(() => server);

    beforeAll(async () => {
      receiver = await startOtlpReceiver();
      server = await startSlipwayServer(
        dialect,
        {
          SLIPWAY_LOCAL_AGENT: 'true',
          SLIPWAY_APPS_PORT: String(await freePort()),
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_BSP_SCHEDULE_DELAY: '100',
        },
        { bootstrap: true },
      );
    }, STEP_TIMEOUT_MS);

    afterAll(async () => {
      const left = server === undefined ? [] : await killProcessesUnder(server.dataDir);
      await server?.close();
      await receiver?.close();
      expect(left).toEqual([]);
    }, STEP_TIMEOUT_MS);

    it('covers the deploy request, the job it enqueued and the agent task that job dispatched with one trace', { timeout: STEP_TIMEOUT_MS }, async () => {
      const { environmentId } = await localEnvironment(api, server.organizationId, 'traced');
      expect((await api('POST', `/environment/${environmentId}/deploy`, {})).status).toBe(202);

      const request = await waitFor(
        () => receiver.spans().find((span) => span.name === 'POST /environment/:environmentId/deploy'),
        'the span of the deploy request',
      );
      expect(request.parentSpanId).toBeUndefined();
      expect(request.kind).toBe(2); // SERVER
      expect(request.attributes).toMatchObject({
        'http.request.method': 'POST',
        'http.route': '/environment/:environmentId/deploy',
        'http.response.status_code': 202,
      });
      expect(request.resource['service.name']).toBe('slipway');

      const task = await waitFor(
        () => receiver.spans().find((span) => span.name === 'agent task deploy' && span.traceId === request.traceId),
        'the span of the agent task in the request’s trace',
      );
      const jobRuns = receiver.spans().filter((span) => span.name === 'job environment.action' && span.traceId === request.traceId);
      expect(jobRuns.length).toBeGreaterThan(0);
      // Every run of the job (it waits for its task, deferred, and runs again) is a child of the request's span.
      for (const run of jobRuns) {
        expect(run.parentSpanId).toBe(request.spanId);
        expect(run.attributes['slipway.job.kind']).toBe('environment.action');
      }
      // The agent's work is the child of the run that dispatched its task.
      expect(jobRuns.map((run) => run.spanId)).toContain(task.parentSpanId);
      expect(task.attributes).toMatchObject({ 'slipway.task.subject_type': 'ENVIRONMENT', 'slipway.task.subject_id': environmentId, 'slipway.task.outcome': 'succeed' });
      expect(task.status?.code ?? 0).not.toBe(2);

      const status = await api<{ state: string }>('GET', `/environment/${environmentId}/status`);
      expect(status.body.state).toBe('DEPLOYED');
    });

    it('continues the trace of an incoming traceparent', { timeout: STEP_TIMEOUT_MS }, async () => {
      const traceId = randomBytes(16).toString('hex');
      const parentSpanId = randomBytes(8).toString('hex');
      const answer = await api('GET', `/organization/${server.organizationId}`, undefined, { traceparent: `00-${traceId}-${parentSpanId}-01` });
      expect(answer.status).toBe(200);
      const span = await waitFor(() => receiver.spans().find((candidate) => candidate.traceId === traceId), 'the span of the request in the caller’s trace');
      expect(span.parentSpanId).toBe(parentSpanId);
      expect(span.name).toBe('GET /organization/:organizationId');
      expect(span.attributes['http.response.status_code']).toBe(200);
    });

    it('exports no token, no authorization header and no request path with ids', async () => {
      // Every span so far, the agent's and the worker's included, as they were sent.
      const sent = receiver.bodies().join('\n');
      expect(sent).not.toBe('');
      expect(sent).not.toContain(server.apiToken);
      expect(sent).not.toContain(server.apiToken.slice(0, 12));
      expect(sent.toLowerCase()).not.toContain('authorization');
      for (const span of receiver.spans()) {
        for (const [key, value] of Object.entries({ ...span.attributes, ...span.resource })) {
          expect(key).not.toMatch(/header|body|query|url\.full|command/i);
          if (typeof value === 'string') expect(value).not.toContain(server.apiToken);
        }
      }
    });
  });

  describe(`tracing off [${dialect}]`, () => {
    let receiver: OtlpReceiver;
    let server: TracedServer;
    const api = apiOf(() => server);

    beforeAll(async () => {
      receiver = await startOtlpReceiver();
      // The endpoint is there, but OTEL_SDK_DISABLED turns tracing off: nothing of OpenTelemetry starts.
      server = await startSlipwayServer(
        dialect,
        { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '100', OTEL_SDK_DISABLED: 'true' },
        { bootstrap: true },
      );
    }, STEP_TIMEOUT_MS);

    afterAll(async () => {
      await server?.close();
      await receiver?.close();
    }, STEP_TIMEOUT_MS);

    it('sends the receiver nothing, even after the requests, their jobs and the server’s stop', { timeout: STEP_TIMEOUT_MS }, async () => {
      const { clusterId, environmentId } = await localEnvironment(api, server.organizationId, 'untraced');
      expect((await api('POST', `/environment/${environmentId}/deploy`, {}, { traceparent: `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01` })).status).toBe(202);
      // The job ran and dispatched the task, which waits for an agent this server does not run: all of it untraced.
      await vi.waitFor(
        async () => {
          const agent = await api<{ open_tasks: number }>('GET', `/organization/${server.organizationId}/cluster/${clusterId}/agent`);
          expect(agent.body.open_tasks).toBe(1);
        },
        { timeout: 60_000, interval: 200 },
      );
      // A server that traced would have flushed every buffered span on its way out.
      await server.stop();
      expect(receiver.bodies()).toEqual([]);
    });
  });
}
