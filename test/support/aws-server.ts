import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local AWS endpoint for STS and ECR, speaking their real wire protocols so the real AWS SDK v3 talks to it
 * (SLIPWAY_AWS_ENDPOINT_URL points at it): STS's query protocol (form-encoded `Action=…` requests, XML answers,
 * `ErrorResponse` bodies) and ECR's JSON 1.1 protocol (`x-amz-target: AmazonEC2ContainerRegistry_V20150921.<Op>`,
 * `__type` error bodies). Every request's SigV4 signature is verified against the secret of the access key it
 * names, so a test proves the stored secret was decrypted and used. What it answers is switchable per test.
 */

export type AwsService = 'sts' | 'ecr';

export type AwsBehaviour =
  | { kind: 'accept' }
  /** An AWS error code: AccessDenied / InvalidClientTokenId (STS), AccessDeniedException / UnrecognizedClientException (ECR). */
  | { kind: 'refuse'; code: string }
  | { kind: 'throttle' }
  /** The connection is dropped without an answer, as an unreachable or failing endpoint. */
  | { kind: 'drop' }
  /** 200 with a body that is neither XML nor JSON, as a misconfigured proxy would answer. */
  | { kind: 'garbage' };

/** The first rule matching a request decides its answer; no match: accept. */
export interface AwsRule {
  service?: AwsService;
  region?: string;
  behaviour: AwsBehaviour;
}

export interface AwsCall {
  service: AwsService;
  action: string;
  region: string;
  accessKeyId: string;
  answered: 'ok' | 'error' | 'dropped';
}

export interface AssumedRole {
  roleArn: string;
  externalId: string | null;
  /** The access key that assumed it, and the temporary key it got. */
  by: string;
  accessKeyId: string;
}

export interface TestAwsServer {
  url: string;
  /** Roles assumed so far (STS AssumeRole); any role can be assumed by any known key. */
  assumedRoles: AssumedRole[];
  /** Registers an IAM user's key pair in an account; answers the pair. */
  addKey(accountId: string): { accessKeyId: string; secretAccessKey: string };
  setRules(rules: AwsRule[]): void;
  calls: AwsCall[];
  close(): Promise<void>;
}

const STS_NAMESPACE = 'https://sts.amazonaws.com/doc/2011-06-15/';
const ECR_TARGET_PREFIX = 'AmazonEC2ContainerRegistry_V20150921.';

interface Key {
  secretAccessKey: string;
  accountId: string;
  /** Temporary keys (from AssumeRole) are valid only with their session token. */
  sessionToken?: string;
  arn: string;
}

function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}

/** RFC 3986 encoding as SigV4 wants it for path segments and query parts. */
function uriEncode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

interface ParsedAuthorization {
  accessKeyId: string;
  date: string;
  region: string;
  service: string;
  signedHeaders: string[];
  signature: string;
}

function parseAuthorization(header: string | undefined): ParsedAuthorization | undefined {
  const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
    header ?? '',
  );
  if (match === null) return undefined;
  const [, accessKeyId, date, region, service, signedHeaders, signature] = match;
  if (!accessKeyId || !date || !region || !service || !signedHeaders || !signature) return undefined;
  return { accessKeyId, date, region, service, signedHeaders: signedHeaders.split(';'), signature };
}

/** The signature the request should carry, computed as AWS does (SigV4, header-signed). */
function expectedSignature(request: IncomingMessage, body: Buffer, auth: ParsedAuthorization, secret: string): string {
  const url = new URL(request.url ?? '/', 'http://local');
  const canonicalPath = url.pathname.split('/').map((segment) => uriEncode(decodeURIComponent(segment))).join('/') || '/';
  const canonicalQuery = [...url.searchParams.entries()]
    .map(([k, v]) => [uriEncode(k), uriEncode(v)] as const)
    .sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : 1) : a < b ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const canonicalHeaders = auth.signedHeaders
    .map((name) => {
      const value = request.headers[name];
      const text = Array.isArray(value) ? value.join(',') : (value ?? '');
      return `${name}:${text.trim().replace(/\s+/g, ' ')}\n`;
    })
    .join('');
  const payloadHash = typeof request.headers['x-amz-content-sha256'] === 'string' ? request.headers['x-amz-content-sha256'] : sha256Hex(body);
  const canonicalRequest = [request.method ?? 'POST', canonicalPath, canonicalQuery, canonicalHeaders, auth.signedHeaders.join(';'), payloadHash].join('\n');
  const amzDate = String(request.headers['x-amz-date'] ?? '');
  const scope = `${auth.date}/${auth.region}/${auth.service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${secret}`, auth.date), auth.region), auth.service), 'aws4_request');
  return createHmac('sha256', signingKey).update(stringToSign, 'utf8').digest('hex');
}

function xmlEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function requestId(): string {
  return randomBytes(16).toString('hex');
}

const STS_ERRORS: Record<string, { status: number; message: string }> = {
  AccessDenied: { status: 403, message: 'User is not authorized to perform: sts:GetCallerIdentity' },
  InvalidClientTokenId: { status: 403, message: 'The security token included in the request is invalid.' },
  SignatureDoesNotMatch: { status: 403, message: 'The request signature we calculated does not match the signature you provided.' },
  Throttling: { status: 400, message: 'Rate exceeded' },
};

const ECR_ERRORS: Record<string, { status: number; message: string }> = {
  AccessDeniedException: { status: 400, message: 'User is not authorized to perform: ecr:DescribeRepositories on resource: *' },
  UnrecognizedClientException: { status: 400, message: 'The security token included in the request is invalid.' },
  InvalidSignatureException: { status: 400, message: 'The request signature we calculated does not match the signature you provided.' },
  ThrottlingException: { status: 400, message: 'Rate exceeded' },
};

function stsError(response: ServerResponse, code: string): void {
  const known = STS_ERRORS[code] ?? { status: 403, message: code };
  response.writeHead(known.status, { 'content-type': 'text/xml' });
  response.end(
    `<ErrorResponse xmlns="${STS_NAMESPACE}"><Error><Type>Sender</Type><Code>${xmlEscape(code)}</Code>` +
      `<Message>${xmlEscape(known.message)}</Message></Error><RequestId>${requestId()}</RequestId></ErrorResponse>`,
  );
}

function ecrError(response: ServerResponse, code: string): void {
  const known = ECR_ERRORS[code] ?? { status: 400, message: code };
  response.writeHead(known.status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-errortype': code, 'x-amzn-requestid': requestId() });
  response.end(JSON.stringify({ __type: code, message: known.message }));
}

export async function startTestAwsServer(): Promise<TestAwsServer> {
  const keys = new Map<string, Key>();
  let rules: AwsRule[] = [];
  const calls: AwsCall[] = [];
  const assumedRoles: AssumedRole[] = [];

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const target = request.headers['x-amz-target'];
    const service: AwsService = typeof target === 'string' && target.startsWith(ECR_TARGET_PREFIX) ? 'ecr' : 'sts';
    const action = service === 'ecr' ? String(target).slice(ECR_TARGET_PREFIX.length) : (new URLSearchParams(body.toString('utf8')).get('Action') ?? '');
    const auth = parseAuthorization(request.headers.authorization);
    const call: AwsCall = { service, action, region: auth?.region ?? '', accessKeyId: auth?.accessKeyId ?? '', answered: 'error' };
    calls.push(call);
    const refuse = (code: string) => (service === 'sts' ? stsError(response, code) : ecrError(response, code));

    const rule = rules.find((r) => (r.service === undefined || r.service === service) && (r.region === undefined || r.region === auth?.region));
    const behaviour = rule?.behaviour ?? { kind: 'accept' };
    if (behaviour.kind === 'drop') {
      call.answered = 'dropped';
      request.socket.destroy();
      return;
    }
    if (behaviour.kind === 'garbage') {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html><body>captive portal</body>');
      return;
    }
    if (behaviour.kind === 'throttle') return refuse(service === 'sts' ? 'Throttling' : 'ThrottlingException');
    if (behaviour.kind === 'refuse') return refuse(behaviour.code);

    const key = auth === undefined ? undefined : keys.get(auth.accessKeyId);
    if (auth === undefined || key === undefined) return refuse(service === 'sts' ? 'InvalidClientTokenId' : 'UnrecognizedClientException');
    if (auth.service !== service || expectedSignature(request, body, auth, key.secretAccessKey) !== auth.signature) {
      return refuse(service === 'sts' ? 'SignatureDoesNotMatch' : 'InvalidSignatureException');
    }
    if (key.sessionToken !== undefined && (request.headers['x-amz-security-token'] !== key.sessionToken || !auth.signedHeaders.includes('x-amz-security-token'))) {
      return refuse(service === 'sts' ? 'InvalidClientTokenId' : 'UnrecognizedClientException');
    }

    call.answered = 'ok';
    if (service === 'sts' && action === 'GetCallerIdentity') {
      response.writeHead(200, { 'content-type': 'text/xml' });
      response.end(
        `<GetCallerIdentityResponse xmlns="${STS_NAMESPACE}"><GetCallerIdentityResult>` +
          `<Arn>${key.arn}</Arn><UserId>AIDA${auth.accessKeyId.slice(4)}</UserId>` +
          `<Account>${key.accountId}</Account></GetCallerIdentityResult>` +
          `<ResponseMetadata><RequestId>${requestId()}</RequestId></ResponseMetadata></GetCallerIdentityResponse>`,
      );
      return;
    }
    if (service === 'sts' && action === 'AssumeRole') {
      const form = new URLSearchParams(body.toString('utf8'));
      const roleArn = form.get('RoleArn') ?? '';
      const account = /^arn:aws:iam::([0-9]{12}):role\/(.+)$/.exec(roleArn);
      if (account === null || account[1] === undefined) {
        call.answered = 'error';
        return refuse('AccessDenied');
      }
      const temporary = { accessKeyId: `ASIA${randomBytes(8).toString('hex').toUpperCase()}`, secretAccessKey: randomBytes(30).toString('base64') };
      const sessionToken = randomBytes(48).toString('base64');
      const session = form.get('RoleSessionName') ?? 'session';
      keys.set(temporary.accessKeyId, {
        secretAccessKey: temporary.secretAccessKey,
        accountId: account[1],
        sessionToken,
        arn: `arn:aws:sts::${account[1]}:assumed-role/${account[2] ?? 'role'}/${session}`,
      });
      assumedRoles.push({ roleArn, externalId: form.get('ExternalId'), by: auth.accessKeyId, accessKeyId: temporary.accessKeyId });
      const expiration = new Date(Date.now() + 3600_000).toISOString();
      response.writeHead(200, { 'content-type': 'text/xml' });
      response.end(
        `<AssumeRoleResponse xmlns="${STS_NAMESPACE}"><AssumeRoleResult><Credentials>` +
          `<AccessKeyId>${temporary.accessKeyId}</AccessKeyId><SecretAccessKey>${xmlEscape(temporary.secretAccessKey)}</SecretAccessKey>` +
          `<SessionToken>${xmlEscape(sessionToken)}</SessionToken><Expiration>${expiration}</Expiration></Credentials>` +
          `<AssumedRoleUser><Arn>arn:aws:sts::${account[1]}:assumed-role/${xmlEscape(account[2] ?? 'role')}/${xmlEscape(session)}</Arn>` +
          `<AssumedRoleId>AROA${randomBytes(8).toString('hex').toUpperCase()}:${xmlEscape(session)}</AssumedRoleId></AssumedRoleUser>` +
          `</AssumeRoleResult><ResponseMetadata><RequestId>${requestId()}</RequestId></ResponseMetadata></AssumeRoleResponse>`,
      );
      return;
    }
    if (service === 'ecr' && (action === 'DescribeRepositories' || action === 'GetAuthorizationToken')) {
      const answer =
        action === 'DescribeRepositories'
          ? { repositories: [] }
          : {
              authorizationData: [
                {
                  authorizationToken: Buffer.from(`AWS:ecr-password-${auth.accessKeyId}`).toString('base64'),
                  expiresAt: Math.floor(Date.now() / 1000) + 12 * 3600,
                  proxyEndpoint: `https://${key.accountId}.dkr.ecr.${auth.region}.amazonaws.com`,
                },
              ],
            };
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': requestId() });
      response.end(JSON.stringify(answer));
      return;
    }
    call.answered = 'error';
    return refuse(service === 'sts' ? 'InvalidAction' : 'UnknownOperationException');
  }

  const server = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    assumedRoles,
    addKey(accountId) {
      const accessKeyId = `AKIA${randomBytes(8).toString('hex').toUpperCase()}`;
      const secretAccessKey = randomBytes(30).toString('base64');
      keys.set(accessKeyId, { secretAccessKey, accountId, arn: `arn:aws:iam::${accountId}:user/slipway-test` });
      return { accessKeyId, secretAccessKey };
    },
    setRules(next) {
      rules = next;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
