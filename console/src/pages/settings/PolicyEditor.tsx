import { useEffect, useId, useRef, useState } from 'react';
import { apiRequest, fieldErrorsOf, messageOf } from '../../api/client.ts';
import { SelectField, TextField } from '../../ui/controls.tsx';

/** What the last check of the policy said: still waiting, a problem at a line and column, or the sample's decision. */
export type PolicyCheck =
  | { kind: 'idle' }
  | { kind: 'checking' }
  | { kind: 'problem'; line: number | undefined; column: number | undefined; message: string }
  | { kind: 'decision'; allow: boolean; reason: string }
  | { kind: 'failed'; message: string };

/** The request a policy is tried against, in the fields of the input document a policy API token's policy sees. */
export interface SampleRequest {
  method: string;
  path: string;
  operationId: string;
  tokenName: string;
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((method) => ({ value: method, label: method }));
/** How long typing must pause before the policy is checked: one request per pause, not per key. */
const CHECK_DELAY_MS = 400;

/** `line 3, column 7: unexpected token` (the API's detail for `/opa_policy`) read into its parts. */
export function policyProblemOf(detail: string): { line: number | undefined; column: number | undefined; message: string } {
  const match = /^line (\d+), column (\d+): ([\s\S]*)$/.exec(detail);
  if (match === null) return { line: undefined, column: undefined, message: detail };
  return { line: Number(match[1]), column: Number(match[2]), message: match[3] ?? '' };
}

/**
 * The input document the server builds for a request (src/http/policy-input.ts), from the sample's fields: the path's
 * segments, the operation id when given, no parameters, query or body, and a token named as the sample says.
 */
export function sampleInputOf(sample: SampleRequest, organizationId: string) {
  const path = sample.path.split('?', 1)[0] ?? '';
  return {
    method: sample.method,
    path: path.split('/').filter((segment) => segment !== ''),
    route: path,
    operation_id: sample.operationId.trim() === '' ? null : sample.operationId.trim(),
    params: {},
    query: {},
    body: null,
    organization_id: organizationId,
    token: { id: '00000000-0000-0000-0000-000000000000', name: sample.tokenName },
  };
}

/**
 * The policy's code and its dry run: every pause in typing sends the policy and the sample request to the API's
 * evaluate operation (the same compiler and evaluator a token's requests go through), which answers either the
 * decision with its reason or a 400 naming the line and column of the first problem; the line is shown marked, with
 * a caret under the column. An answer that arrives after a newer check began is dropped.
 */
export function PolicyEditor(props: {
  organizationId: string;
  policy: string;
  onPolicyChange: (policy: string) => void;
  sample: SampleRequest;
  onSampleChange: (sample: SampleRequest) => void;
  /** The create request's own message for the policy, when it refused it. */
  errorMessage?: string | undefined;
}) {
  const { organizationId, policy, sample } = props;
  const [check, setCheck] = useState<PolicyCheck>({ kind: 'idle' });
  const latest = useRef(0);
  const id = useId();
  useEffect(() => {
    if (policy.trim() === '') {
      setCheck({ kind: 'idle' });
      return undefined;
    }
    const sequence = ++latest.current;
    setCheck({ kind: 'checking' });
    const timer = setTimeout(() => {
      apiRequest<{ allow: boolean; reason: string }>('POST', `/organization/${organizationId}/policyApiToken/evaluate`, {
        opa_policy: policy,
        input: sampleInputOf(sample, organizationId),
      }).then(
        (verdict) => {
          if (sequence === latest.current) setCheck({ kind: 'decision', allow: verdict.allow, reason: verdict.reason });
        },
        (error: unknown) => {
          if (sequence !== latest.current) return;
          const detail = fieldErrorsOf(error).get('opa_policy');
          setCheck(detail === undefined ? { kind: 'failed', message: messageOf(error) } : { kind: 'problem', ...policyProblemOf(detail) });
        },
      );
    }, CHECK_DELAY_MS);
    return () => clearTimeout(timer);
  }, [organizationId, policy, sample]);

  const problem = check.kind === 'problem' ? check : props.errorMessage === undefined ? undefined : { kind: 'problem' as const, ...policyProblemOf(props.errorMessage) };
  const problemLine = problem?.line === undefined ? undefined : policy.split('\n')[problem.line - 1];
  const set = (field: keyof SampleRequest) => (value: string) => props.onSampleChange({ ...sample, [field]: value });
  return (
    <div className="policy-editor">
      <div className="field">
        <label htmlFor={`${id}-code`}>Policy (Rego)</label>
        <textarea
          id={`${id}-code`}
          className="code-input"
          value={policy}
          onChange={(event) => props.onPolicyChange(event.target.value)}
          rows={12}
          spellCheck={false}
          autoCapitalize="off"
          autoCorrect="off"
          required
          maxLength={65536}
          aria-invalid={problem === undefined ? undefined : true}
          aria-describedby={`${id}-check ${id}-hint`}
        />
        <span id={`${id}-hint`} className="field-description">
          The rule <code>allow</code> of the policy’s package decides each request; anything but <code>true</code> refuses it.
        </span>
      </div>
      <div id={`${id}-check`} className="policy-check" role="status">
        {problem === undefined ? null : (
          <div className="policy-problem">
            <p className="error-message">{problem.line === undefined ? problem.message : `Line ${problem.line}, column ${problem.column}: ${problem.message}`}</p>
            {problemLine === undefined || problem.line === undefined ? null : (
              <pre className="policy-problem-line" aria-label={`Line ${problem.line}`}>
                <span className="policy-line-number">{problem.line}</span>
                <mark>{problemLine === '' ? ' ' : problemLine}</mark>
                {'\n'}
                <span className="policy-line-number" aria-hidden="true">
                  {' '.repeat(String(problem.line).length)}
                </span>
                <span aria-hidden="true">{`${' '.repeat(Math.max(0, (problem.column ?? 1) - 1))}^`}</span>
              </pre>
            )}
          </div>
        )}
        {check.kind === 'checking' ? <p className="muted">Checking…</p> : null}
        {check.kind === 'failed' ? <p className="error-message">{check.message}</p> : null}
      </div>
      <fieldset className="policy-sample">
        <legend>Try it on a request</legend>
        <div className="field-grid">
          <SelectField id={`${id}-method`} label="Method" value={sample.method} onChange={set('method')} options={METHODS} />
          <TextField label="Path" value={sample.path} onChange={set('path')} maxLength={2048} />
          <TextField label="Operation ID (optional)" value={sample.operationId} onChange={set('operationId')} maxLength={128} />
          <TextField label="Token name" value={sample.tokenName} onChange={set('tokenName')} maxLength={255} />
        </div>
        <div className="policy-decision" aria-live="polite">
          {check.kind === 'decision' ? (
            <p className={check.allow ? 'policy-allowed' : 'policy-denied'}>
              <strong>{check.allow ? 'Allowed' : 'Denied'}</strong>: {check.reason}
            </p>
          ) : (
            <p className="muted">{problem === undefined ? 'The decision appears here once the policy compiles.' : 'No decision while the policy does not compile.'}</p>
          )}
        </div>
      </fieldset>
    </div>
  );
}
