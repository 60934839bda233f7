import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { RouterProvider } from '@tanstack/react-router';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { onSessionExpired } from './auth/session.ts';
import { createConsoleRouter } from './router.tsx';
import './styles.css';

const queryClient = new QueryClient({
  defaultOptions: {
    // A refusal (4xx) will not change by asking again; a network hiccup may.
    queries: { retry: (count, error) => count < 2 && error instanceof TypeError, staleTime: 10_000, refetchOnWindowFocus: true },
  },
});
const router = createConsoleRouter(queryClient);

// An ended session (expired token, or a 401 from the API) sends the person to sign in again, then back here.
onSessionExpired(() => {
  queryClient.clear();
  void router.navigate({ to: '/sign-in', search: { redirect: `${location.pathname}${location.search}`, expired: true } });
});

createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  </StrictMode>,
);
