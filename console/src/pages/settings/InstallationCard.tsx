import { useState } from 'react';
import { api, fetchClient, messageOf } from '../../api/client.ts';
import { Button, ErrorMessage, Spinner } from '../../ui/controls.tsx';
import { CopyButton } from '../../ui/CopyButton.tsx';

/**
 * What the Slipway installation itself offers every organization: the addresses its deployments connect from, to
 * allow-list in firewalls and databases (listPlatformIps), and its own certificate authority's root certificate, to
 * trust once so the services' private names open over HTTPS without warnings (getInstallationCertificateAuthority).
 */
export function InstallationCard() {
  const ips = api.useQuery('get', '/ips');
  const [download, setDownload] = useState<{ state: 'idle' | 'downloading' | 'saved' } | { state: 'none' | 'failed'; message: string }>({ state: 'idle' });
  // JSON unless the Accept header prefers text (the typed answer is either); the client asks for JSON.
  const addresses = typeof ips.data === 'object' ? ips.data.ips : [];
  async function downloadCertificate() {
    setDownload({ state: 'downloading' });
    const { data, error } = await fetchClient.GET('/certificateAuthority', { parseAs: 'text', headers: { accept: 'application/x-pem-file' } });
    if (data === undefined) {
      // 404: the installation has no authority of its own (it serves no HTTPS): a fact to say, not a failure.
      const failure: unknown = error;
      const none = failure !== null && typeof failure === 'object' && 'status' in failure && failure.status === 404;
      setDownload({ state: none ? 'none' : 'failed', message: messageOf(error) });
      return;
    }
    const url = URL.createObjectURL(new Blob([data], { type: 'application/x-pem-file' }));
    const link = document.createElement('a');
    link.href = url;
    link.download = 'slipway-installation-ca.pem';
    link.click();
    URL.revokeObjectURL(url);
    setDownload({ state: 'saved' });
  }
  return (
    <section aria-labelledby="installation-heading" className="card settings-card">
      <h2 id="installation-heading" className="card-title">
        Installation
      </h2>
      <h3 className="small">Outbound IP addresses</h3>
      <p className="muted">Deployments reach outside systems from these addresses: allow them in firewalls and databases.</p>
      {ips.isPending ? <Spinner label="Loading the addresses…" /> : null}
      <ErrorMessage message={ips.isError ? messageOf(ips.error) : undefined} />
      {ips.isSuccess && addresses.length === 0 ? <p>This installation has no fixed outbound addresses configured.</p> : null}
      {addresses.length === 0 ? null : (
        <div className="installation-ips">
          <ul className="plain-list" aria-label="Outbound IP addresses">
            {addresses.map((address) => (
              <li key={address}>
                <code>{address}</code>
              </li>
            ))}
          </ul>
          <CopyButton value={addresses.join('\n')} label="Copy the outbound IP addresses" />
        </div>
      )}
      <h3 className="small">Root certificate</h3>
      <p className="muted">Trust it once, and the services’ private names (such as *.localhost) open over HTTPS without warnings.</p>
      <div className="form-actions form-actions-start" aria-live="polite">
        <Button variant="secondary" onPress={() => void downloadCertificate()}>
          Download the root certificate (PEM)
        </Button>
        {download.state === 'downloading' ? <span className="muted">Downloading…</span> : null}
        {download.state === 'saved' ? <span className="saved-note">Saved as slipway-installation-ca.pem.</span> : null}
        {download.state === 'none' ? <span className="muted">Nothing to download: {download.message}.</span> : null}
      </div>
      <ErrorMessage message={download.state === 'failed' ? download.message : undefined} />
    </section>
  );
}
