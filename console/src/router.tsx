import type { QueryClient } from '@tanstack/react-query';
import { createRootRouteWithContext, createRoute, createRouter, Outlet, redirect } from '@tanstack/react-router';
import { currentSession } from './auth/session.ts';
import { CallbackPage } from './pages/CallbackPage.tsx';
import { HomePage } from './pages/HomePage.tsx';
import { NewOrganizationPage } from './pages/NewOrganizationPage.tsx';
import { NotFoundPage } from './pages/NotFoundPage.tsx';
import { OrganizationPage } from './pages/OrganizationPage.tsx';
import { Shell } from './pages/Shell.tsx';
import { SignInPage } from './pages/SignInPage.tsx';

/**
 * The route tree, in code (no generator step). Everything is under /console (the router's basepath); the signed-in
 * pages share the Shell layout (header, organization switcher, navigation) and send a visitor without a session to
 * the sign-in page with the page they asked for, to come back to it.
 *
 *   /sign-in                               sign-in (also where an expired session lands)
 *   /callback                              the issuer's redirect URI
 *   /                                      the current organization, or the first-organization page
 *   /organizations/new                     create an organization
 *   /organization/$organizationId          organization overview: projects
 */
export interface RouterContext {
  queryClient: QueryClient;
}

const rootRoute = createRootRouteWithContext<RouterContext>()({
  component: Outlet,
  notFoundComponent: NotFoundPage,
});

export interface SignInSearch {
  redirect?: string;
  expired?: boolean;
}

const signInRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: 'sign-in',
  validateSearch: (search: Record<string, unknown>): SignInSearch => ({
    ...(typeof search.redirect === 'string' && search.redirect.startsWith('/console/') ? { redirect: search.redirect } : {}),
    ...(search.expired === true || search.expired === 'true' ? { expired: true } : {}),
  }),
  beforeLoad: ({ search }) => {
    if (currentSession() !== undefined) throw redirect({ href: search.redirect ?? '/console/' });
  },
  component: SignInPage,
});

const callbackRoute = createRoute({ getParentRoute: () => rootRoute, path: 'callback', component: CallbackPage });

const signedInRoute = createRoute({
  getParentRoute: () => rootRoute,
  id: 'signed-in',
  beforeLoad: () => {
    if (currentSession() === undefined) throw redirect({ to: '/sign-in', search: { redirect: `${location.pathname}${location.search}` } });
  },
  component: Shell,
});

const homeRoute = createRoute({ getParentRoute: () => signedInRoute, path: '/', component: HomePage });
const newOrganizationRoute = createRoute({ getParentRoute: () => signedInRoute, path: 'organizations/new', component: NewOrganizationPage });
export const organizationRoute = createRoute({ getParentRoute: () => signedInRoute, path: 'organization/$organizationId', component: OrganizationPage });

const routeTree = rootRoute.addChildren([signInRoute, callbackRoute, signedInRoute.addChildren([homeRoute, newOrganizationRoute, organizationRoute])]);

export function createConsoleRouter(queryClient: QueryClient) {
  return createRouter({ routeTree, basepath: '/console', context: { queryClient }, defaultPreload: 'intent', scrollRestoration: true });
}

declare module '@tanstack/react-router' {
  interface Register {
    router: ReturnType<typeof createConsoleRouter>;
  }
}
