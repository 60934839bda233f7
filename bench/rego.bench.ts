import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { systemClock } from '../src/lib/clock.ts';
import { createRegoPolicyEngine } from '../src/policy/policy.engine.ts';
import { measurePhase, type Measurement } from './load.ts';
import { freePort, runNodeScript, startServerProcess, stopAllChildren } from './processes.ts';

/**
 * Rego decision speed: the median microseconds of one `allow` decision, through the same engine port the
 * authorizer calls (input conversion + evaluation), for three realistic policy-token policies. Each policy runs
 * a warm-up, then BATCHES timed batches; the figure is the median batch's time per decision.
 *
 * Then the HTTP overhead of a policy token: the real server (src/main.ts, SQLite, its own process) answers the
 * same request — GET /organization/{id}/project, 10 projects — for an API token and for a policy token whose
 * policy allows it (path prefix + method), alternated twice under autocannon from this process.
 */
const WARMUP_DECISIONS = 20_000;
const BATCHES = 30;
const DECISIONS_PER_BATCH = 5_000;
const GOAL_MICROS = 20;

const ORGANIZATION_ID = '0192a6e4-0000-7000-8000-000000000001';
const PROJECT_IDS = Array.from({ length: 20 }, (_, i) => `0192a6e4-0000-7000-8000-${String(100 + i).padStart(12, '0')}`);

function requestInput(method: string, path: string[], route: string, operationId: string, params: Record<string, string>, body: unknown) {
  return {
    method,
    path,
    route,
    operation_id: operationId,
    params,
    query: {},
    body,
    organization_id: ORGANIZATION_ID,
    token: { id: '0192a6e4-0000-7000-8000-0000000000ff', name: 'deploy-bot' },
  };
}

const projectRequest = requestInput(
  'PUT',
  ['project', PROJECT_IDS[7] as string],
  '/project/{projectId}',
  'editProject',
  { projectId: PROJECT_IDS[7] as string },
  { name: 'agent-web', description: 'edited by the agent' },
);

const fiftyRules = Array.from(
  { length: 50 },
  (_, i) => `allow if {\n\tinput.operation_id == "operation${i}"\n\tcount([s | some s in input.path; s != ""]) >= 1\n}`,
).join('\n\n');

const CASES = [
  {
    name: 'method allow-list',
    policy: 'package agent\n\nallow if input.method in {"GET", "HEAD", "OPTIONS"}\n',
    input: requestInput('GET', ['organization', ORGANIZATION_ID, 'project'], '/organization/{organizationId}/project', 'listProject', { organizationId: ORGANIZATION_ID }, null),
  },
  {
    name: 'path prefix + project-id set',
    policy: `package agent

allowed_projects := {${PROJECT_IDS.map((id) => `"${id}"`).join(', ')}}

allow if {
\tinput.path[0] == "project"
\tinput.params.projectId in allowed_projects
\tstartswith(input.body.name, "agent-")
}
`,
    input: projectRequest,
  },
  {
    name: '50 rules with a comprehension',
    policy: `package agent\n\n${fiftyRules}\n`,
    input: requestInput('GET', ['organization', ORGANIZATION_ID, 'project'], '/organization/{organizationId}/project', 'operation49', { organizationId: ORGANIZATION_ID }, null),
  },
] as const;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

const engine = createRegoPolicyEngine(systemClock);
const rows: { name: string; allowed: boolean; medianMicros: number; p90Micros: number }[] = [];
for (const testCase of CASES) {
  const policy = engine.compile(testCase.policy);
  const verdict = engine.decide(policy, testCase.input);
  if (!verdict.allow) throw new Error(`${testCase.name}: expected allow, got ${verdict.reason}`);
  for (let i = 0; i < WARMUP_DECISIONS; i++) engine.decide(policy, testCase.input);
  const perDecision: number[] = [];
  for (let batch = 0; batch < BATCHES; batch++) {
    const start = performance.now();
    for (let i = 0; i < DECISIONS_PER_BATCH; i++) engine.decide(policy, testCase.input);
    perDecision.push(((performance.now() - start) * 1000) / DECISIONS_PER_BATCH);
  }
  const sorted = [...perDecision].sort((a, b) => a - b);
  rows.push({ name: testCase.name, allowed: verdict.allow, medianMicros: median(perDecision), p90Micros: sorted[Math.floor(sorted.length * 0.9)] as number });
}

console.log(`Rego decisions (${BATCHES} batches of ${DECISIONS_PER_BATCH}, after ${WARMUP_DECISIONS} warm-up decisions)`);
console.log(`${'policy'.padEnd(34)}${'median µs'.padStart(12)}${'p90 µs'.padStart(10)}  goal < ${GOAL_MICROS} µs`);
for (const row of rows) {
  const verdict = row.medianMicros < GOAL_MICROS ? 'met' : 'NOT met';
  console.log(`${row.name.padEnd(34)}${row.medianMicros.toFixed(2).padStart(12)}${row.p90Micros.toFixed(2).padStart(10)}  ${verdict}`);
}

// ---- HTTP: the same request with an API token and with a policy token ----

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const HOST = '127.0.0.1';
const HTTP_SETTINGS = { connections: 10, warmupSeconds: 2, seconds: 6 };
const AGENT_POLICY = `package agent

allow if {
\tinput.method == "GET"
\tinput.path[0] == "organization"
\tinput.path[1] == input.organization_id
}
`;

async function measureHttpOverhead(): Promise<void> {
  const scratch = mkdtempSync(path.join(tmpdir(), 'slipway-bench-rego-'));
  try {
    const port = await freePort();
    const env = {
      SLIPWAY_HOST: HOST,
      SLIPWAY_PORT: String(port),
      SLIPWAY_DATA_DIR: scratch,
      SLIPWAY_LOG_LEVEL: 'warn',
      SLIPWAY_DATABASE_URL: '',
      SLIPWAY_OIDC_ISSUER: '',
      SLIPWAY_OIDC_AUDIENCE: '',
      // One caller sending thousands of requests a second: rate limiting would measure itself.
      SLIPWAY_RATE_LIMIT_PER_MINUTE: '0',
    };
    const boot = JSON.parse(
      await runNodeScript('bin/slipway.js', ['admin', 'bootstrap', '--email', 'bench@example.com', '--organization', 'Bench', '--json'], { cwd: ROOT, env }),
    ) as { organization_id: string; api_token: string };
    const server = await startServerProcess({ name: 'slipway', entry: 'src/main.ts', cwd: ROOT, env, host: HOST, port, readyPath: '/ips' });
    const apiAuth = `Token ${boot.api_token}`;
    const orgPath = `/organization/${boot.organization_id}`;
    for (let i = 0; i < 10; i++) {
      const response = await fetch(`${server.baseUrl}${orgPath}/project`, {
        method: 'POST',
        headers: { authorization: apiAuth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `project-${i}` }),
      });
      if (response.status !== 200) throw new Error(`createProject answered ${response.status}`);
    }
    const created = await fetch(`${server.baseUrl}${orgPath}/policyApiToken`, {
      method: 'POST',
      headers: { authorization: apiAuth, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench-agent', opa_policy: AGENT_POLICY }),
    });
    if (created.status !== 201) throw new Error(`createOrganizationPolicyApiToken answered ${created.status}: ${await created.text()}`);
    const policyAuth = `Token ${((await created.json()) as { token: string }).token}`;

    const target = { baseUrl: server.baseUrl, serverCpuMicros: server.cpuMicros, signal: new AbortController().signal };
    const phase = async (authorization: string): Promise<Measurement> =>
      (await measurePhase(target, { method: 'GET', path: `${orgPath}/project`, headers: { authorization }, okStatus: 200 }, HTTP_SETTINGS)).measured;
    const results: { token: string; measurement: Measurement }[] = [];
    for (let round = 0; round < 2; round++) {
      results.push({ token: 'API token', measurement: await phase(apiAuth) });
      results.push({ token: 'policy token', measurement: await phase(policyAuth) });
    }

    console.log(`\nHTTP: GET /organization/{id}/project (10 projects), ${HTTP_SETTINGS.connections} connections, ${HTTP_SETTINGS.seconds} s per phase, alternated`);
    console.log(`${'token'.padEnd(16)}${'req/s'.padStart(9)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'server CPU µs/req'.padStart(19)}${'non-200'.padStart(9)}`);
    for (const { token, measurement } of results) {
      const others = Object.values(measurement.otherStatuses).reduce((sum, count) => sum + count, 0) + measurement.errors;
      console.log(
        `${token.padEnd(16)}${measurement.okPerSecond.toFixed(0).padStart(9)}${measurement.p50Ms.toFixed(2).padStart(9)}` +
          `${measurement.p99Ms.toFixed(2).padStart(9)}${measurement.serverCpuMicrosPerRequest.toFixed(0).padStart(19)}${String(others).padStart(9)}`,
      );
    }
    const mean = (token: string, pick: (m: Measurement) => number): number => {
      const values = results.filter((row) => row.token === token).map((row) => pick(row.measurement));
      return values.reduce((sum, value) => sum + value, 0) / values.length;
    };
    const apiCpu = mean('API token', (m) => m.serverCpuMicrosPerRequest);
    const policyCpu = mean('policy token', (m) => m.serverCpuMicrosPerRequest);
    console.log(`policy-token overhead: ${(policyCpu - apiCpu).toFixed(0)} µs of server CPU per request (${apiCpu.toFixed(0)} → ${policyCpu.toFixed(0)})`);
    console.log(`requests/s, policy token / API token: ${(mean('policy token', (m) => m.okPerSecond) / mean('API token', (m) => m.okPerSecond)).toFixed(2)}`);
  } finally {
    await stopAllChildren();
    rmSync(scratch, { recursive: true, force: true });
  }
}

await measureHttpOverhead();
