import { writeFile } from 'node:fs/promises';
import { readCredentials } from './credentials.ts';
import { CliError, serverUrlOf, type CliIo } from './sign-in.ts';

/**
 * `slipway https ca`: the installation CA's root certificate (docs/https.md, "Private names"), which signs the
 * certificates of the services' private names (`*.localhost`, `.internal`). Printed (or written to --output) with how
 * to trust it, so a developer does it once. The root is public: no sign-in is needed. The certificate alone goes to
 * standard output (`> file` keeps it); the notes go to `note` (standard error).
 */
export async function showInstallationCa(options: { url?: string | undefined; output?: string | undefined }, io: CliIo, note: (text: string) => void): Promise<void> {
  const stored = await readCredentials(io.env);
  const server = serverUrlOf(options.url, io.env, stored.current);
  let response: Response;
  try {
    response = await fetch(new URL('/certificateAuthority', server), { headers: { accept: 'application/x-pem-file' } });
  } catch (error) {
    throw new CliError(`${server} cannot be reached: ${(error as Error).message}`);
  }
  const text = await response.text();
  if (response.status === 404) throw new CliError(`${server} has no certificate authority of its own: it serves no HTTPS (SLIPWAY_APPS_HTTPS_PORT), or its private names are issued by its ACME directory`);
  if (!response.ok || !text.includes('-----BEGIN CERTIFICATE-----')) throw new CliError(`${server} answered ${response.status} instead of a certificate`);
  if (options.output === undefined) {
    io.out(text);
  } else {
    await writeFile(options.output, text, { mode: 0o644 });
    note(`wrote ${options.output}\n`);
  }
  const file = options.output ?? 'slipway-installation-ca.pem';
  note(
    [
      'Trust it once, and the services of this installation answer over HTTPS without warnings:',
      `  Debian/Ubuntu: sudo cp ${file} /usr/local/share/ca-certificates/slipway-installation-ca.crt && sudo update-ca-certificates`,
      `  macOS:         sudo security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain ${file}`,
      `  Node.js:       NODE_EXTRA_CA_CERTS=${file}`,
      'It can sign private names only (localhost, .test, .internal, .local, …), never a public one.',
      '',
    ].join('\n'),
  );
}
