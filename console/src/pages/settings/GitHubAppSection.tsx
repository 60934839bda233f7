import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, messageOf } from '../../api/client.ts';
import { useOrganizationPermissions } from '../../auth/permissions.ts';
import { Button, ErrorMessage, ModalDialog, Spinner, TextField } from '../../ui/controls.tsx';
import { FormActions, formErrorsOf, useRefreshThenClose } from '../../ui/dialogs.tsx';
import { PermissionNote } from '../../ui/PermissionNote.tsx';

const PROVIDER_ACCOUNTS = '/organization/{organizationId}/account/gitAuthProvider' as const;

/** What GitHub's setup redirect carries back after the App is installed (`?installation_id=…&code=…`), if this page is it. */
function setupRedirectOf(search: string): { installationId: string; code: string } | undefined {
  const query = new URLSearchParams(search);
  const installationId = query.get('installation_id');
  const code = query.get('code');
  return installationId === null || code === null ? undefined : { installationId, code };
}

/**
 * The organization's GitHub App installation (organizationGithubAppConnect / Disconnect): which installation it uses,
 * read from its provider accounts (the App's is the one whose bot acts). Connecting records the installation id and
 * the setup redirect's code; when GitHub's setup URL points at this page, the dialog opens with both filled in.
 */
export function GitHubAppSection({ organizationId }: { organizationId: string }) {
  const accounts = api.useQuery('get', PROVIDER_ACCOUNTS, { params: { path: { organizationId } } });
  const permissions = useOrganizationPermissions(organizationId);
  const redirect = setupRedirectOf(window.location.search);
  const [dialog, setDialog] = useState<'connect' | 'disconnect' | undefined>(redirect === undefined ? undefined : 'connect');
  const app = accounts.data?.results.find((account) => account.use_bot === true);
  const cannot = permissions.reason('admin');
  const note = 'github-app-permission';
  return (
    <section aria-labelledby="github-app-heading" className="section">
      <div className="section-heading">
        <h2 id="github-app-heading">GitHub App</h2>
      </div>
      <p className="muted section-intro">
        Record the installation of your organization’s GitHub App. Slipway lists and clones repositories with the git tokens above; the installation is kept for what acts as the App.
      </p>
      <PermissionNote id={note} reason={cannot} />
      {accounts.isPending ? <Spinner label="Loading the GitHub App…" /> : null}
      <ErrorMessage message={accounts.isError ? messageOf(accounts.error) : undefined} />
      {accounts.isSuccess ? (
        <div className="card github-app">
          {app === undefined ? (
            <p>Not connected.</p>
          ) : (
            <p>
              Connected: installation <code>{app.id}</code>
            </p>
          )}
          <div className="row-actions">
            {app === undefined ? (
              <Button onPress={() => setDialog('connect')} isDisabled={cannot !== undefined} aria-describedby={cannot === undefined ? undefined : note}>
                Connect the GitHub App
              </Button>
            ) : (
              <>
                <Button variant="secondary" onPress={() => setDialog('connect')} isDisabled={cannot !== undefined} aria-describedby={cannot === undefined ? undefined : note}>
                  Replace the installation
                </Button>
                <Button variant="quiet-danger" onPress={() => setDialog('disconnect')} isDisabled={cannot !== undefined} aria-describedby={cannot === undefined ? undefined : note}>
                  Disconnect
                </Button>
              </>
            )}
          </div>
        </div>
      ) : null}
      {dialog === 'connect' ? <ConnectDialog organizationId={organizationId} initial={redirect} onClose={() => setDialog(undefined)} /> : null}
      {dialog === 'disconnect' && app !== undefined ? <DisconnectDialog organizationId={organizationId} installationId={app.id ?? ''} onClose={() => setDialog(undefined)} /> : null}
    </section>
  );
}

function ConnectDialog({ organizationId, initial, onClose }: { organizationId: string; initial: { installationId: string; code: string } | undefined; onClose: () => void }) {
  const [installationId, setInstallationId] = useState(initial?.installationId ?? '');
  const [code, setCode] = useState(initial?.code ?? '');
  const connect = api.useMutation('post', '/organization/{organizationId}/github/connect', useRefreshThenClose([PROVIDER_ACCOUNTS], onClose));
  const { fields, summary } = formErrorsOf(connect);
  function submit(event: FormEvent) {
    event.preventDefault();
    if (connect.isPending) return;
    connect.mutate({ params: { path: { organizationId } }, body: { installation_id: installationId.trim(), code: code.trim() } });
  }
  return (
    <ModalDialog title="Connect the GitHub App" isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form onSubmit={submit} className="form">
        <p className="muted">After installing the App on your GitHub account, GitHub redirects to its setup URL with these two values.</p>
        <TextField label="Installation id" value={installationId} onChange={(value) => (connect.reset(), setInstallationId(value))} isRequired autoFocus inputMode="numeric" maxLength={20} errorMessage={fields.get('installation_id')} />
        <TextField label="Setup code" type="password" value={code} onChange={(value) => (connect.reset(), setCode(value))} isRequired maxLength={255} description="The redirect’s code: checked, not stored." errorMessage={fields.get('code')} />
        <FormActions error={summary} onCancel={onClose} submitLabel="Connect" />
      </Form>
    </ModalDialog>
  );
}

function DisconnectDialog({ organizationId, installationId, onClose }: { organizationId: string; installationId: string; onClose: () => void }) {
  const disconnect = api.useMutation('delete', '/organization/{organizationId}/github/disconnect', useRefreshThenClose([PROVIDER_ACCOUNTS], onClose));
  return (
    <ModalDialog title="Disconnect the GitHub App" isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <p>
        Slipway forgets installation <code>{installationId}</code>. Git tokens keep working; the App stays installed on GitHub until you uninstall it there.
      </p>
      <div className="form-foot">
        <ErrorMessage message={disconnect.isError ? messageOf(disconnect.error) : undefined} />
        <div className="form-actions">
          <Button variant="secondary" onPress={onClose}>
            Cancel
          </Button>
          <Button variant="danger" onPress={() => (disconnect.isPending ? undefined : disconnect.mutate({ params: { path: { organizationId } } }))}>
            Disconnect
          </Button>
        </div>
      </div>
    </ModalDialog>
  );
}
