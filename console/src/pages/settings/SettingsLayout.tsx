import { getRouteApi, Link, Outlet } from '@tanstack/react-router';
import { useEffect } from 'react';
import { api, messageOf } from '../../api/client.ts';
import { Breadcrumbs, ErrorMessage } from '../../ui/controls.tsx';

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
          <nav aria-label="Settings" className="settings-nav">
            <Link to="/organization/$organizationId/settings" params={params} activeOptions={{ exact: true }} className="settings-link">
              General
            </Link>
            <Link to="/organization/$organizationId/settings/members" params={params} className="settings-link">
              Members
            </Link>
            <Link to="/organization/$organizationId/settings/roles" params={params} className="settings-link">
              Roles
            </Link>
            <Link to="/organization/$organizationId/settings/api-tokens" params={params} className="settings-link">
              API tokens
            </Link>
            <Link to="/organization/$organizationId/settings/git-tokens" params={params} className="settings-link">
              Git tokens
            </Link>
            <Link to="/organization/$organizationId/settings/container-registries" params={params} className="settings-link">
              Container registries
            </Link>
            <Link to="/organization/$organizationId/settings/helm-repositories" params={params} className="settings-link">
              Helm repositories
            </Link>
            <Link to="/organization/$organizationId/settings/webhooks" params={params} className="settings-link">
              Webhooks
            </Link>
            <Link to="/organization/$organizationId/settings/labels-annotations" params={params} className="settings-link">
              Labels and annotations
            </Link>
            <Link to="/organization/$organizationId/settings/billing" params={params} className="settings-link">
              Billing
            </Link>
            <Link to="/organization/$organizationId/settings/audit-log" params={params} className="settings-link">
              Audit log
            </Link>
          </nav>
          <div className="settings-body">
            <Outlet />
          </div>
        </div>
      )}
    </main>
  );
}
