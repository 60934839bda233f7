import type { Clock } from '../lib/clock.ts';
import { badRequest } from '../lib/errors.ts';
import { CompileError, compilePolicy, decide, type CompiledPolicy, type DecidingRule, type PolicyDecision } from './rego/rego.engine.ts';
import { fromJson, toJson, type RegoValue } from './rego/rego.value.ts';

/**
 * Policy API tokens' use of the Rego engine: compile a token's policy once at creation (refusing it with line and
 * column when it does not compile), and decide each request by the boolean rule `allow` in the policy's package.
 * Anything but `true` denies: undefined, another value, a runtime error, or an exhausted budget.
 *
 * Budgets: evaluation runs on the request path, so a decision may take at most 100 000 steps and 50 ms; policies
 * are at most 64 KiB, 500 rules and 32 levels of nesting. A pathological policy is refused at creation or denies
 * at evaluation, never stalls the server.
 */
export interface PolicyVerdict {
  allow: boolean;
  /** Why, for the 403 message and the dry run: what `allow` was, or what failed. */
  reason: string;
}

export interface PolicyEngine {
  /** Throws a bad_request AppError naming line and column when the source is not a valid policy. */
  compile(source: string): CompiledPolicy;
  decide(policy: CompiledPolicy, input: unknown): PolicyVerdict;
}

export type { CompiledPolicy };

const POLICY_FILE = 'policy.rego';
const COMPILE_LIMITS = { maxSourceBytes: 64 * 1024, maxRules: 500, maxNestingDepth: 32 };
const DECISION_BUDGET = { maxSteps: 100_000, maxMilliseconds: 50 };

function describe(value: RegoValue): string {
  const text = JSON.stringify(toJson(value), (_key, member: unknown) => (typeof member === 'bigint' ? member.toString() : member));
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function ruleText(rule: DecidingRule | undefined): string {
  if (rule === undefined) return '';
  return ` (${rule.isDefault ? 'default rule' : 'rule'} at line ${rule.line}, column ${rule.column})`;
}

function verdictOf(decision: PolicyDecision): PolicyVerdict {
  switch (decision.outcome) {
    case 'allowed':
      return { allow: true, reason: `allow is true${ruleText(decision.rule)}` };
    case 'undefined':
      return { allow: false, reason: 'allow is undefined for this request' };
    case 'not-true':
      return { allow: false, reason: `allow is ${describe(decision.value ?? null)}, not true${ruleText(decision.rule)}` };
    case 'error':
      return { allow: false, reason: `evaluation failed: ${decision.error ?? 'unknown error'}` };
  }
}

/** `time.now_ns` in policies follows the same clock as token expiry. */
export function createRegoPolicyEngine(clock: Clock): PolicyEngine {
  return {
    compile(source) {
      let policy: CompiledPolicy;
      try {
        policy = compilePolicy(source, { file: POLICY_FILE, limits: COMPILE_LIMITS });
      } catch (error) {
        if (!(error instanceof CompileError)) throw error;
        throw badRequest(`the policy does not compile: ${error.message}`, [
          { field: '/opa_policy', message: `line ${error.line}, column ${error.column}: ${error.detail}` },
        ]);
      }
      const definesAllow = policy.modules.some((module) => module.rules.some((rule) => rule.head[0]?.type === 'scalar' && rule.head[0].value === 'allow'));
      if (!definesAllow) {
        const where = policy.modules[0]?.packageLocation;
        throw badRequest('the policy defines no allow rule, so it would deny every request', [
          {
            field: '/opa_policy',
            message: `line ${where?.row ?? 1}, column ${where?.col ?? 1}: define "allow" in package ${policy.packagePath.join('.')}`,
          },
        ]);
      }
      return policy;
    },

    decide(policy, input) {
      let document: RegoValue;
      try {
        document = fromJson(input);
      } catch {
        // Deeper than the call stack allows (a hostile body): nothing a policy could allow.
        return { allow: false, reason: 'the request is too deeply nested for the policy to evaluate' };
      }
      const nowNs = BigInt(clock.now().getTime()) * 1_000_000n;
      return verdictOf(decide(policy, document, { budget: DECISION_BUDGET, strictBuiltinErrors: false, nowNs }));
    },
  };
}
