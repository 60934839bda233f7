import { Link } from '@tanstack/react-router';
import { useEffect } from 'react';

export function NotFoundPage() {
  useEffect(() => {
    document.title = 'Not found · Slipway';
  }, []);
  return (
    <div className="centered-page">
      <main className="card">
        <h1>Page not found</h1>
        <p>There is no page at this address in the console.</p>
        <Link to="/">Go to your organization</Link>
      </main>
    </div>
  );
}
