import { performance } from 'node:perf_hooks';
import { systemClock } from '../src/lib/clock.ts';
import { createRegoPolicyEngine } from '../src/policy/policy.engine.ts';

/**
 * Rego decision speed: the median microseconds of one `allow` decision, through the same engine port the
 * authorizer calls (input conversion + evaluation), for three realistic policy-token policies. Each policy runs
 * a warm-up, then BATCHES timed batches; the figure is the median batch's time per decision.
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
