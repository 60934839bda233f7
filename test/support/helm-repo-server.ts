import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An HTTPS-style Helm chart repository for tests (plain HTTP on loopback): serves `<path>/index.yaml` as
 * `helm repo index` writes it, behind Basic auth when credentials are given (401 with a challenge otherwise).
 */
export interface HelmRepoOptions {
  /** Where the repository lives, e.g. `/stable`. */
  path: string;
  indexYaml: string;
  credentials?: { username: string; password: string };
}

export interface TestHelmRepo {
  /** The repository URL: `http://127.0.0.1:<port><path>` */
  url: string;
  requests: { url: string; authorization: string | undefined }[];
  close(): Promise<void>;
}

export async function startHelmRepo(options: HelmRepoOptions): Promise<TestHelmRepo> {
  const requests: TestHelmRepo['requests'] = [];
  const expected =
    options.credentials === undefined ? undefined : `Basic ${Buffer.from(`${options.credentials.username}:${options.credentials.password}`).toString('base64')}`;
  const server = createServer((request, response) => {
    requests.push({ url: request.url ?? '', authorization: request.headers.authorization });
    if (expected !== undefined && request.headers.authorization !== expected) {
      response.writeHead(401, { 'www-authenticate': 'Basic realm="charts"', 'content-type': 'text/plain' });
      response.end('unauthorized');
      return;
    }
    if (request.method === 'GET' && request.url === `${options.path}/index.yaml`) {
      response.writeHead(200, { 'content-type': 'application/x-yaml' });
      response.end(options.indexYaml);
      return;
    }
    response.writeHead(404, { 'content-type': 'text/plain' });
    response.end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${options.path}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error === undefined ? resolve() : reject(error)));
      }),
  };
}
