import { currentSession, expireSession } from '../../auth/session.ts';

/**
 * Saves a file the API serves only with the bearer token (a Terraform export, a build usage report): a plain link
 * cannot carry the token, so the file is fetched, then handed to the browser as a download under `fileName`. A
 * refusal throws the error body, as apiRequest does, so the caller shows it where the download was asked.
 */
export async function downloadFile(path: string, fileName: string): Promise<void> {
  const session = currentSession();
  const response = await fetch(`${location.origin}${path}`, { headers: session === undefined ? {} : { authorization: `Bearer ${session.accessToken}` } });
  if (response.status === 401) expireSession();
  if (!response.ok) {
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = { status: response.status, message: `The server answered ${response.status} ${response.statusText}.` };
    }
    throw body;
  }
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  // The browser has read the blob once the click's download started; the URL is freed on the next turn.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
