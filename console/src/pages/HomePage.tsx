import { Navigate } from '@tanstack/react-router';
import { api, messageOf } from '../api/client.ts';
import { ErrorMessage, Spinner } from '../ui/controls.tsx';
import { rememberedOrganization } from './current-organization.ts';

/** `/`: the organization last opened (or the first); a person without one creates their first. */
export function HomePage() {
  const organizations = api.useQuery('get', '/organization');
  if (organizations.isPending) return <Spinner label="Loading your organizations…" />;
  if (organizations.isError) {
    return (
      <main className="page">
        <h1>Organizations</h1>
        <ErrorMessage message={messageOf(organizations.error)} />
      </main>
    );
  }
  const list = organizations.data.results;
  if (list.length === 0) return <Navigate to="/organizations/new" replace />;
  const remembered = rememberedOrganization();
  const target = list.find((organization) => organization.id === remembered) ?? list[0];
  return <Navigate to="/organization/$organizationId" params={{ organizationId: target!.id }} replace />;
}
