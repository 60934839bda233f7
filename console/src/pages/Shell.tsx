import { Link, Outlet, useNavigate, useParams } from '@tanstack/react-router';
import { useEffect } from 'react';
import { Button as AriaButton, Menu, MenuItem, MenuTrigger, Popover, Separator } from 'react-aria-components';
import { api } from '../api/client.ts';
import { useOrganizationChanges } from '../api/live-changes.ts';
import { signOut } from '../auth/oidc.ts';
import { currentSession } from '../auth/session.ts';
import { Button } from '../ui/controls.tsx';
import { Brand } from './Brand.tsx';
import { rememberOrganization } from './current-organization.ts';
import { usePushConnected } from './live.ts';

const NEW_ORGANIZATION = '__new__';

/** The signed-in layout: header (organization switcher, who is signed in, sign-out), main navigation, the page. */
export function Shell() {
  const { organizationId, projectId } = useParams({ strict: false });
  const session = currentSession();
  const organizations = api.useQuery('get', '/organization');
  const current = organizations.data?.results.find((organization) => organization.id === organizationId);
  const navigate = useNavigate();
  useEffect(() => {
    if (organizationId !== undefined) rememberOrganization(organizationId);
  }, [organizationId]);
  // States of the organization's pages are pushed while this stream is connected (pages/live.ts).
  useOrganizationChanges(organizationId);
  const pushConnected = usePushConnected();

  return (
    <div className="shell" data-live-changes={pushConnected ? 'connected' : 'polling'}>
      <header className="top-bar">
        <Link to="/" className="brand-link" aria-label="Slipway home">
          <Brand />
        </Link>
        {organizations.data === undefined || organizations.data.results.length === 0 ? null : (
          <MenuTrigger>
            <AriaButton className="switcher" aria-label={`Organization: ${current?.name ?? 'choose one'}`}>
              <span className="switcher-label">Organization</span>
              <span className="switcher-value">{current?.name ?? 'Choose…'}</span>
              <span aria-hidden="true" className="switcher-chevron">
                ▾
              </span>
            </AriaButton>
            <Popover className="popover" placement="bottom start">
              <Menu
                className="menu"
                aria-label="Organizations"
                onAction={(key) =>
                  key === NEW_ORGANIZATION
                    ? void navigate({ to: '/organizations/new' })
                    : void navigate({ to: '/organization/$organizationId', params: { organizationId: String(key) } })
                }
              >
                {organizations.data.results.map((organization) => (
                  <MenuItem key={organization.id} id={organization.id} className="menu-item" textValue={organization.name}>
                    <span aria-hidden="true" className="menu-check">
                      {organization.id === organizationId ? '✓' : ''}
                    </span>
                    {organization.name}
                  </MenuItem>
                ))}
                <Separator className="menu-separator" />
                <MenuItem id={NEW_ORGANIZATION} className="menu-item">
                  <span aria-hidden="true" className="menu-check">
                    +
                  </span>
                  New organization
                </MenuItem>
              </Menu>
            </Popover>
          </MenuTrigger>
        )}
        <div className="top-bar-end">
          <span className="who" title={session?.email}>
            {session?.name ?? session?.email}
          </span>
          <Link to="/account" className="button button-secondary">
            Account
          </Link>
          <Button variant="secondary" onPress={() => void signOut(session)}>
            Sign out
          </Button>
        </div>
      </header>
      {organizationId === undefined ? null : (
        <nav aria-label="Main" className="main-nav">
          <Link to="/organization/$organizationId" params={{ organizationId }} activeOptions={{ exact: true }} className="nav-link">
            Projects
          </Link>
          {projectId === undefined ? null : (
            <Link to="/organization/$organizationId/project/$projectId" params={{ organizationId, projectId }} activeOptions={{ exact: true }} className="nav-link">
              Environments
            </Link>
          )}
          <Link to="/organization/$organizationId/clusters" params={{ organizationId }} className="nav-link">
            Clusters
          </Link>
          <Link to="/organization/$organizationId/settings" params={{ organizationId }} className="nav-link">
            Settings
          </Link>
        </nav>
      )}
      <div className="content">
        <Outlet />
      </div>
    </div>
  );
}
