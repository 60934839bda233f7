import { Link, useRouter } from '@tanstack/react-router';
import { useEffect, useRef, useState } from 'react';
import { finishSignIn } from '../auth/oidc.ts';
import { reloadSession } from '../auth/session.ts';
import { ErrorMessage, Spinner } from '../ui/controls.tsx';
import { Brand } from './Brand.tsx';

/** The issuer's redirect URI: exchanges the code, then goes back to the page the person was on. */
export function CallbackPage() {
  const router = useRouter();
  const [problem, setProblem] = useState<string | undefined>();
  const started = useRef(false);
  useEffect(() => {
    document.title = 'Signing in · Slipway';
    // Once: the code can be exchanged once (StrictMode runs effects twice in development).
    if (started.current) return;
    started.current = true;
    finishSignIn(new URLSearchParams(location.search))
      .then((returnTo) => {
        reloadSession();
        return router.navigate({ href: returnTo, replace: true });
      })
      .catch((error: unknown) => setProblem(error instanceof Error ? error.message : 'The sign-in could not be completed.'));
  }, [router]);

  return (
    <div className="centered-page">
      <main className="card sign-in">
        <Brand />
        <h1>Signing in</h1>
        {problem === undefined ? (
          <Spinner label="Finishing the sign-in…" />
        ) : (
          <>
            <ErrorMessage message={problem} />
            <Link to="/sign-in" className="button button-primary wide">
              Sign in again
            </Link>
          </>
        )}
      </main>
    </div>
  );
}
