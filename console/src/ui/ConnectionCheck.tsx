import { useState } from 'react';
import { messageOf } from '../api/client.ts';
import { ErrorMessage, StatusChip } from './controls.tsx';

/** What a registry's or repository's check answers: reached over HTTP, let in, and the server's words. */
export interface ConnectionCheckResult {
  reachable: boolean;
  authenticated: boolean;
  message: string;
}
type CheckState = ConnectionCheckResult | { error: string } | 'checking';

/**
 * On-demand connection checks of a list's rows (container registries, Helm repositories): `run(id, request)` records
 * "checking", then the result or the refusal, per row id; `stateOf(id)` is what the row's cell shows.
 */
export function useConnectionChecks() {
  const [checks, setChecks] = useState<Record<string, CheckState>>({});
  async function run(id: string, request: () => Promise<ConnectionCheckResult>) {
    setChecks((current) => ({ ...current, [id]: 'checking' }));
    try {
      const result = await request();
      setChecks((current) => ({ ...current, [id]: result }));
    } catch (error) {
      setChecks((current) => ({ ...current, [id]: { error: messageOf(error) } }));
    }
  }
  return { run, stateOf: (id: string): CheckState | undefined => checks[id] };
}

/** A row's "Connection" cell: not checked, checking, Connected / Access refused / Unreachable with the message, or the refusal. Announced politely. */
export function ConnectionCell({ state }: { state: CheckState | undefined }) {
  return (
    <td data-label="Connection" aria-live="polite">
      {state === undefined ? (
        <span className="muted">not checked</span>
      ) : state === 'checking' ? (
        <StatusChip state="QUEUED" label="Checking…" />
      ) : 'error' in state ? (
        <ErrorMessage message={state.error} />
      ) : (
        <>
          <StatusChip state={state.reachable && state.authenticated ? 'DEPLOYED' : 'DEPLOYMENT_ERROR'} label={state.reachable ? (state.authenticated ? 'Connected' : 'Access refused') : 'Unreachable'} />
          <span className="kind-label">{state.message}</span>
        </>
      )}
    </td>
  );
}
