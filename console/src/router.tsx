import type { QueryClient } from '@tanstack/react-query';
import { createRootRouteWithContext, createRoute, createRouter, lazyRouteComponent, Outlet, redirect } from '@tanstack/react-router';
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
 *   /invitations/$orgId/$invitationId      an invitation (the e-mail's link, via the server): accept or decline
 *   /organization/$organizationId          organization overview: projects
 *     /project/$projectId                  the project's environments (create, clone, deploy, stop, restart, delete)
 *       /environment/$environmentId        the environment's services with their live status
 *         /new/$kind                       the creation wizard of a service kind (application, container, …)
 *         /$kind/$serviceId                a service: overview, deployments, live logs, variables, domains (?tab=)
 *     /clusters                            clusters with their live state; a new LOCAL cluster
 *       /$clusterId                        a cluster: state, agent, actions, lock, edit, delete
 *     /settings                            organization settings (own navigation): general (rename, delete)
 *       /members                           members (role, remove, transfer ownership) and invitations
 *       /roles                             the roles members can have, custom roles
 *       /api-tokens                        API tokens (create: shown once; delete)
 *       /policy-tokens                     policy API tokens (create with the policy editor and its dry run; delete)
 *       /git-tokens                        git tokens (create, edit or replace, delete; the services using each)
 *       /cloud-credentials                 cloud credentials per provider (add, edit, delete)
 *       /container-registries              container registries (add, check the connection, delete)
 *       /helm-repositories                 Helm repositories (add, edit, check the connection, delete)
 *       /webhooks                          webhooks (create, edit, delete) with each one's delivery log and redelivery
 *       /labels-annotations                labels groups and annotations groups (create, edit, where used, delete)
 *       /billing                           plan, cost, billing status, credit code, billing information, cards,
 *                                          invoices (detail, PDF, all by mail), usage report
 *       /audit-log                         the organization's events, filtered and paged
 *       /alerts                            alert receivers (tested before saving) and alert rules with their history
 *   /account                               the signed-in person's account: profile and communication e-mail
 *
 * The pages below the organization are loaded when first opened (route-level code splitting): the first page a
 * person sees downloads only the sign-in, the Shell and the organization overview.
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
// Not below `organization/$organizationId`: the invitee is not a member yet, and the Shell would offer that
// organization's navigation (and remember it) for an `organizationId` parameter.
const invitationRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: 'invitations/$invitationOrganizationId/$invitationId',
  component: lazyRouteComponent(() => import('./pages/AcceptInvitationPage.tsx'), 'AcceptInvitationPage'),
});
export const organizationRoute = createRoute({ getParentRoute: () => signedInRoute, path: 'organization/$organizationId', component: OrganizationPage });

const PROJECT_PATH = 'organization/$organizationId/project/$projectId';
const ENVIRONMENT_PATH = `${PROJECT_PATH}/environment/$environmentId` as const;
export const projectRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: PROJECT_PATH,
  component: lazyRouteComponent(() => import('./pages/ProjectPage.tsx'), 'ProjectPage'),
});
export type EnvironmentTab = 'services' | 'deployments' | 'logs' | 'variables' | 'settings';
const ENVIRONMENT_TABS: readonly EnvironmentTab[] = ['services', 'deployments', 'logs', 'variables', 'settings'];
export const environmentRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: ENVIRONMENT_PATH,
  validateSearch: (search: Record<string, unknown>): { tab?: EnvironmentTab } =>
    ENVIRONMENT_TABS.includes(search.tab as EnvironmentTab) && search.tab !== 'services' ? { tab: search.tab as EnvironmentTab } : {},
  component: lazyRouteComponent(() => import('./pages/EnvironmentPage.tsx'), 'EnvironmentPage'),
});
export const newServiceRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: `${ENVIRONMENT_PATH}/new/$kind`,
  component: lazyRouteComponent(() => import('./pages/NewServicePage.tsx'), 'NewServicePage'),
});

export type ServiceTab = 'overview' | 'deployments' | 'logs' | 'variables' | 'domains' | 'settings';
const SERVICE_TABS: readonly ServiceTab[] = ['overview', 'deployments', 'logs', 'variables', 'domains', 'settings'];
export const serviceRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: `${ENVIRONMENT_PATH}/$kind/$serviceId`,
  validateSearch: (search: Record<string, unknown>): { tab?: ServiceTab } =>
    SERVICE_TABS.includes(search.tab as ServiceTab) && search.tab !== 'overview' ? { tab: search.tab as ServiceTab } : {},
  component: lazyRouteComponent(() => import('./pages/ServicePage.tsx'), 'ServicePage'),
});

export const clustersRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: 'organization/$organizationId/clusters',
  component: lazyRouteComponent(() => import('./pages/clusters/ClustersPage.tsx'), 'ClustersPage'),
});
export type ClusterTab = 'overview' | 'environments' | 'logs' | 'events' | 'analyses' | 'platform' | 'network' | 'settings' | 'operator';
const CLUSTER_TABS: readonly ClusterTab[] = ['overview', 'environments', 'logs', 'events', 'analyses', 'platform', 'network', 'settings', 'operator'];
export const clusterRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: 'organization/$organizationId/clusters/$clusterId',
  validateSearch: (search: Record<string, unknown>): { tab?: ClusterTab } =>
    CLUSTER_TABS.includes(search.tab as ClusterTab) && search.tab !== 'overview' ? { tab: search.tab as ClusterTab } : {},
  component: lazyRouteComponent(() => import('./pages/clusters/ClusterPage.tsx'), 'ClusterPage'),
});

const SETTINGS_PATH = 'organization/$organizationId/settings';
export const settingsRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: SETTINGS_PATH,
  component: lazyRouteComponent(() => import('./pages/settings/SettingsLayout.tsx'), 'SettingsLayout'),
});
const settingsGeneralRoute = createRoute({
  getParentRoute: () => settingsRoute,
  path: '/',
  component: lazyRouteComponent(() => import('./pages/settings/GeneralSettings.tsx'), 'GeneralSettings'),
});
const settingsMembersRoute = createRoute({
  getParentRoute: () => settingsRoute,
  path: 'members',
  component: lazyRouteComponent(() => import('./pages/settings/MembersSettings.tsx'), 'MembersSettings'),
});
const settingsRolesRoute = createRoute({
  getParentRoute: () => settingsRoute,
  path: 'roles',
  component: lazyRouteComponent(() => import('./pages/settings/RolesSettings.tsx'), 'RolesSettings'),
});
const settingsApiTokensRoute = createRoute({
  getParentRoute: () => settingsRoute,
  path: 'api-tokens',
  component: lazyRouteComponent(() => import('./pages/settings/ApiTokensSettings.tsx'), 'ApiTokensSettings'),
});
const settingsPolicyTokensRoute = createRoute({
  getParentRoute: () => settingsRoute,
  path: 'policy-tokens',
  component: lazyRouteComponent(() => import('./pages/settings/PolicyTokensSettings.tsx'), 'PolicyTokensSettings'),
});
const settingsCloudCredentialsRoute = createRoute({
  getParentRoute: () => settingsRoute,
  path: 'cloud-credentials',
  component: lazyRouteComponent(() => import('./pages/settings/CloudCredentialsSettings.tsx'), 'CloudCredentialsSettings'),
});

const settingsGitTokensRoute = createRoute({
  getParentRoute: () => settingsRoute,
  path: 'git-tokens',
  component: lazyRouteComponent(() => import('./pages/settings/GitTokensSettings.tsx'), 'GitTokensSettings'),
});
const settingsRegistriesRoute = createRoute({
  getParentRoute: () => settingsRoute,
  path: 'container-registries',
  component: lazyRouteComponent(() => import('./pages/settings/RegistriesSettings.tsx'), 'RegistriesSettings'),
});
const settingsHelmRepositoriesRoute = createRoute({
  getParentRoute: () => settingsRoute,
  path: 'helm-repositories',
  component: lazyRouteComponent(() => import('./pages/settings/HelmRepositoriesSettings.tsx'), 'HelmRepositoriesSettings'),
});
const settingsWebhooksRoute = createRoute({
  getParentRoute: () => settingsRoute,
  path: 'webhooks',
  component: lazyRouteComponent(() => import('./pages/settings/WebhooksSettings.tsx'), 'WebhooksSettings'),
});
const settingsLabelsAnnotationsRoute = createRoute({
  getParentRoute: () => settingsRoute,
  path: 'labels-annotations',
  component: lazyRouteComponent(() => import('./pages/settings/LabelsAnnotationsSettings.tsx'), 'LabelsAnnotationsSettings'),
});
const settingsBillingRoute = createRoute({
  getParentRoute: () => settingsRoute,
  path: 'billing',
  component: lazyRouteComponent(() => import('./pages/settings/BillingSettings.tsx'), 'BillingSettings'),
});
const settingsAlertsRoute = createRoute({
  getParentRoute: () => settingsRoute,
  path: 'alerts',
  component: lazyRouteComponent(() => import('./pages/settings/AlertsSettings.tsx'), 'AlertsSettings'),
});
const accountRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: 'account',
  component: lazyRouteComponent(() => import('./pages/AccountPage.tsx'), 'AccountPage'),
});
const settingsAuditLogRoute = createRoute({
  getParentRoute: () => settingsRoute,
  path: 'audit-log',
  component: lazyRouteComponent(() => import('./pages/settings/AuditLogSettings.tsx'), 'AuditLogSettings'),
});

const routeTree = rootRoute.addChildren([
  signInRoute,
  callbackRoute,
  signedInRoute.addChildren([homeRoute, newOrganizationRoute, invitationRoute, accountRoute, organizationRoute, projectRoute, environmentRoute, newServiceRoute, serviceRoute, clustersRoute, clusterRoute, settingsRoute.addChildren([settingsGeneralRoute, settingsMembersRoute, settingsRolesRoute, settingsApiTokensRoute, settingsPolicyTokensRoute, settingsGitTokensRoute, settingsCloudCredentialsRoute, settingsRegistriesRoute, settingsHelmRepositoriesRoute, settingsWebhooksRoute, settingsLabelsAnnotationsRoute, settingsBillingRoute, settingsAuditLogRoute, settingsAlertsRoute])]),
]);

export function createConsoleRouter(queryClient: QueryClient) {
  return createRouter({ routeTree, basepath: '/console', context: { queryClient }, defaultPreload: 'intent', scrollRestoration: true });
}

declare module '@tanstack/react-router' {
  interface Register {
    router: ReturnType<typeof createConsoleRouter>;
  }
}
