import { getRouteApi } from '@tanstack/react-router';
import { useEffect, useState } from 'react';
import { settings, startSignIn } from '../auth/oidc.ts';
import { Button, ErrorMessage } from '../ui/controls.tsx';
import { Brand } from './Brand.tsx';

const route = getRouteApi('/sign-in');

/** The page before the issuer's: says what happens (and why, after an expiry), then leaves for the issuer. */
export function SignInPage() {
  const search = route.useSearch();
  const [problem, setProblem] = useState<string | undefined>();
  const [leaving, setLeaving] = useState(false);
  const configured = settings().issuer !== null;
  useEffect(() => {
    document.title = 'Sign in · Slipway';
  }, []);

  async function signIn() {
    if (leaving) return;
    setProblem(undefined);
    setLeaving(true);
    try {
      await startSignIn(search.redirect ?? '/console/');
    } catch (error) {
      setLeaving(false);
      setProblem(error instanceof Error ? error.message : 'The sign-in could not start.');
    }
  }

  return (
    <div className="centered-page">
      <main className="card sign-in">
        <Brand />
        <h1>Sign in to Slipway</h1>
        {search.expired === true ? (
          <p className="notice" role="status">
            Your session has ended. Sign in again to continue where you were.
          </p>
        ) : (
          <p className="muted">Deploy and run your applications, databases and jobs.</p>
        )}
        <ErrorMessage message={problem} />
        {configured ? (
          <Button onPress={() => void signIn()} className="wide">
            Sign in
          </Button>
        ) : (
          <p className="error-message" role="alert">
            Sign-in is not configured on this installation: set SLIPWAY_PUBLIC_URL (built-in sign-in) or SLIPWAY_OIDC_ISSUER.
          </p>
        )}
      </main>
    </div>
  );
}
