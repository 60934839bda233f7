import { getRouteApi, Link, Outlet, useRouterState } from '@tanstack/react-router';
import { useEffect, useState } from 'react';
import { Button as AriaButton, Disclosure, DisclosurePanel } from 'react-aria-components';
import { api, messageOf } from '../../api/client.ts';
import { Breadcrumbs, ErrorMessage } from '../../ui/controls.tsx';
import { useNarrowScreen } from '../../ui/narrow-screen.ts';

const route = getRouteApi('/signed-in/organization/$organizationId/settings');

/** The organization's settings: their own navigation (a landmark named "Settings") beside the section shown. */
export function SettingsLayout() {
  const { organizationId } = route.useParams();
  const organization = api.useQuery('get', '/organization/{organizationId}', { params: { path: { organizationId } } });
  useEffect(() => {
    document.title = `Settings · ${organization.data?.name ?? 'Organization'} · Slipway`;
  }, [organization.data?.name]);
  const params = { organizationId };
  return (
    <main className="page wide-page">
      <Breadcrumbs>
        <li>
          <Link to="/organization/$organizationId" params={params} activeOptions={{ exact: true }}>
            {organization.data?.name ?? 'Organization'}
          </Link>
        </li>
        <li aria-current="page">Settings</li>
      </Breadcrumbs>
      <div className="page-heading">
        <p className="eyebrow">Organization settings</p>
        <h1>{organization.data?.name ?? '…'}</h1>
      </div>
      {organization.isError ? (
        <>
          <ErrorMessage message={messageOf(organization.error)} />
          <p>
            <Link to="/">Back to your organizations</Link>
          </p>
        </>
      ) : (
        <div className="settings">
          <SettingsNavigation organizationId={organizationId} />
          <div className="settings-body">
            <Outlet />
          </div>
        </div>
      )}
    </main>
  );
}

/** The sections, in the navigation's order; `slug` is the path below `/settings` ('' for General). */
const SECTIONS = [
  { slug: '', to: '/organization/$organizationId/settings', label: 'General' },
  { slug: 'members', to: '/organization/$organizationId/settings/members', label: 'Members' },
  { slug: 'roles', to: '/organization/$organizationId/settings/roles', label: 'Roles' },
  { slug: 'api-tokens', to: '/organization/$organizationId/settings/api-tokens', label: 'API tokens' },
  { slug: 'policy-tokens', to: '/organization/$organizationId/settings/policy-tokens', label: 'Policy tokens' },
  { slug: 'git-tokens', to: '/organization/$organizationId/settings/git-tokens', label: 'Git tokens' },
  { slug: 'cloud-credentials', to: '/organization/$organizationId/settings/cloud-credentials', label: 'Cloud credentials' },
  { slug: 'container-registries', to: '/organization/$organizationId/settings/container-registries', label: 'Container registries' },
  { slug: 'helm-repositories', to: '/organization/$organizationId/settings/helm-repositories', label: 'Helm repositories' },
  { slug: 'webhooks', to: '/organization/$organizationId/settings/webhooks', label: 'Webhooks' },
  { slug: 'labels-annotations', to: '/organization/$organizationId/settings/labels-annotations', label: 'Labels and annotations' },
  { slug: 'billing', to: '/organization/$organizationId/settings/billing', label: 'Billing' },
  { slug: 'audit-log', to: '/organization/$organizationId/settings/audit-log', label: 'Audit log' },
  { slug: 'alerts', to: '/organization/$organizationId/settings/alerts', label: 'Alerts' },
] as const;

/**
 * The "Settings" navigation landmark. Beside the section on a wide screen; on a phone eleven links wrapped over five
 * rows above the section, so there it is a disclosure: one button naming the section shown, which opens the list
 * (React Aria's Disclosure: aria-expanded, aria-controls, keyboard). Following a link closes it again.
 */
function SettingsNavigation({ organizationId }: { organizationId: string }) {
  const narrow = useNarrowScreen();
  const [open, setOpen] = useState(false);
  const pathname = useRouterState({ select: (state) => state.location.pathname });
  const slug = /\/settings\/([^/]+)/.exec(pathname)?.[1] ?? '';
  const current = SECTIONS.find((section) => section.slug === slug) ?? SECTIONS[0];
  const links = SECTIONS.map((section) => (
    <Link key={section.slug} to={section.to} params={{ organizationId }} activeOptions={{ exact: section.slug === '' }} className="settings-link" onClick={() => setOpen(false)}>
      {section.label}
    </Link>
  ));
  return (
    <nav aria-label="Settings" className="settings-nav">
      {narrow ? (
        <Disclosure className="settings-disclosure" isExpanded={open} onExpandedChange={setOpen}>
          <AriaButton slot="trigger" className="settings-disclosure-trigger">
            <span className="settings-disclosure-label">
              <span className="settings-disclosure-hint">Section</span> {current.label}
            </span>
            <span aria-hidden="true" className="settings-disclosure-chevron">
              {open ? '▴' : '▾'}
            </span>
          </AriaButton>
          <DisclosurePanel className="settings-disclosure-panel">{links}</DisclosurePanel>
        </Disclosure>
      ) : (
        links
      )}
    </nav>
  );
}
