import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { apiRequest, messageOf } from '../../api/client.ts';
import { Button, ErrorMessage } from '../../ui/controls.tsx';
import type { ServiceContext } from '../ServicePage.tsx';

interface DomainCheck {
  domain_name: string;
  status: 'RESOLVES_TO_IP' | 'MATCHES_LOAD_BALANCER_HOST' | 'DOMAIN_NOT_CONFIGURED' | 'DOMAIN_LINKED_TO_WRONG_HOST' | 'GENERIC_FAILURE';
  error_details: string | null;
}

const ANSWER_WORDS: Record<DomainCheck['status'], string> = {
  MATCHES_LOAD_BALANCER_HOST: 'points at the service',
  RESOLVES_TO_IP: 'resolves to addresses',
  DOMAIN_NOT_CONFIGURED: 'no DNS record found',
  DOMAIN_LINKED_TO_WRONG_HOST: 'points somewhere else',
  GENERIC_FAILURE: 'the check failed',
};

/** `check<Kind>CustomDomain`: every domain of the service looked up in DNS at once, the answers listed under the button. */
export function DomainsCheck({ context, queryKey }: { context: ServiceContext; queryKey: readonly unknown[] }) {
  const queryClient = useQueryClient();
  const [pending, setPending] = useState(false);
  const [answer, setAnswer] = useState<{ results: DomainCheck[] } | undefined>();
  const [error, setError] = useState<string | undefined>();
  async function check() {
    if (pending) return;
    setPending(true);
    setError(undefined);
    try {
      setAnswer(await apiRequest<{ results: DomainCheck[] }>('GET', `${context.base}/checkCustomDomain`));
      await queryClient.invalidateQueries({ queryKey });
    } catch (caught) {
      setError(messageOf(caught));
    } finally {
      setPending(false);
    }
  }
  return (
    <div className="source-check">
      <Button variant="secondary" onPress={() => void check()}>
        {pending ? 'Checking…' : 'Check all domains'}
      </Button>
      <ErrorMessage message={error} />
      <div role="status">
        {answer === undefined ? null : (
          <ul className="plain-list" aria-label="DNS check of every domain">
            {answer.results.map((result) => (
              <li key={result.domain_name}>
                <strong>{result.domain_name}</strong>: {ANSWER_WORDS[result.status]}
                {result.error_details ? ` (${result.error_details})` : ''}
              </li>
            ))}
          </ul>
        )}
      </div>
    </div>
  );
}
