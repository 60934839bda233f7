import { AppError, badRequest } from '../lib/errors.ts';

/** The SDK's clients load on the first AWS call: most processes never make one, and loading them costs ~130 ms. */
const loadEcr = () => import('@aws-sdk/client-ecr');
const loadSts = () => import('@aws-sdk/client-sts');

/**
 * Everything Slipway asks of AWS, through the AWS SDK v3: checking a credential before a self-managed cluster is
 * created on it (STS GetCallerIdentity, then ECR DescribeRepositories in us-east-1 and in the cluster's region,
 * SPEC.md "Self-managed cluster creation rules" 4–5) and ECR registry logins (GetAuthorizationToken).
 *
 * Failures become AppErrors a caller can act on: AWS refusing the credential is a bad request (400) naming the call
 * and AWS's error code; throttling, AWS server errors and an unreachable endpoint are `unavailable` (503), after
 * the SDK's own bounded retries.
 */

/** The region SPEC.md's Limits name for the ECR check, whatever the cluster's region. */
export const ECR_CHECK_REGION = 'us-east-1';

/** An AWS credential as stored: static keys, or a role Slipway assumes with its own AWS identity. */
export interface AwsCredentialInput {
  name: string;
  /** The owning organization: the ExternalId of every AssumeRole, so a role trusts Slipway for that organization only. */
  organizationId: string;
  accessKeyId: string | null;
  secretAccessKey: string | null;
  roleArn: string | null;
}

export interface AwsAccessOptions {
  /** SLIPWAY_AWS_ENDPOINT_URL: one endpoint for STS and ECR (a compatible service or a test server); unset = AWS. */
  endpointUrl?: string | undefined;
  /** Attempts per call, first included (the SDK's standard retry mode with backoff); default 3. */
  maxAttempts?: number | undefined;
  /** Milliseconds to connect and to wait for an answer; defaults 3 000 and 10 000. */
  connectionTimeoutMs?: number | undefined;
  requestTimeoutMs?: number | undefined;
  /**
   * Slipway's own AWS identity, which assumes the role of role credentials. Absent: the SDK's default chain
   * (environment, shared config, instance or task role).
   */
  platformCredentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined;
}

export interface CallerIdentity {
  accountId: string;
  arn: string;
}

export interface EcrLogin {
  registryUrl: string;
  username: string;
  password: string;
  expiresAt: string | null;
}

export interface AwsAccess {
  /** STS caller identity, then ECR DescribeRepositories in us-east-1 and in `clusterRegion`; answers the identity. */
  checkClusterCredentials(credential: AwsCredentialInput, clusterRegion: string): Promise<CallerIdentity>;
  /** An ECR login (GetAuthorizationToken) in `region`. */
  authorizeEcr(credential: AwsCredentialInput, region: string): Promise<EcrLogin>;
}

/** AWS error codes that mean "slow down"; anything else a client fault means the credential was refused. */
const THROTTLING_CODES = new Set([
  'Throttling',
  'ThrottlingException',
  'ThrottledException',
  'RequestThrottledException',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'SlowDown',
  'PriorRequestNotComplete',
  'LimitExceededException',
]);

interface SdkError {
  name?: unknown;
  message?: unknown;
  $fault?: unknown;
  $metadata?: { httpStatusCode?: unknown };
}

/** AWS's own words, shortened; they name the missing permission (`ecr:DescribeRepositories`), never a secret. */
function awsMessage(error: SdkError): string {
  const text = typeof error.message === 'string' ? error.message.replace(/\s+/g, ' ').trim() : '';
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/** Turns an SDK failure of `call` into a refusal (400) or a temporary unavailability (503). */
function classify(error: unknown, call: string, credential: AwsCredentialInput): AppError {
  if (error instanceof AppError) return error;
  const sdk = (typeof error === 'object' && error !== null ? error : {}) as SdkError;
  const code = typeof sdk.name === 'string' ? sdk.name : 'Error';
  const status = typeof sdk.$metadata?.httpStatusCode === 'number' ? sdk.$metadata.httpStatusCode : undefined;
  // Only a 4xx answer is AWS judging the request; a 2xx the SDK could not read is AWS (or a proxy) misbehaving.
  if (sdk.$fault === 'client' && status !== undefined && status >= 400 && status < 500 && !THROTTLING_CODES.has(code)) {
    const said = awsMessage(sdk);
    return badRequest(`AWS refused the credentials "${credential.name}" on ${call}: ${code}${said === '' ? '' : ` (${said})`}`, [
      { field: '/cloud_provider_credentials/credentials', message: `refused by AWS (${code})` },
    ]);
  }
  if (THROTTLING_CODES.has(code)) return new AppError('unavailable', `AWS is throttling ${call}; retry later`);
  if (status !== undefined) return new AppError('unavailable', `AWS answered ${call} with ${code} (HTTP ${status}); retry later`);
  return new AppError('unavailable', `AWS could not be reached for ${call}; retry later`);
}

export function createAwsAccess(options: AwsAccessOptions = {}): AwsAccess {
  const clientConfig = (region: string) => ({
    region,
    ...(options.endpointUrl === undefined ? {} : { endpoint: options.endpointUrl }),
    maxAttempts: options.maxAttempts ?? 3,
    retryMode: 'standard',
    requestHandler: { connectionTimeout: options.connectionTimeoutMs ?? 3000, requestTimeout: options.requestTimeoutMs ?? 10_000 },
  });

  /**
   * The keys to sign with: the static ones, or temporary keys from assuming the role with Slipway's own AWS identity
   * (the SDK's default chain: environment, shared config, instance role).
   */
  async function signingKeys(credential: AwsCredentialInput, region: string) {
    if (credential.accessKeyId !== null && credential.secretAccessKey !== null) {
      return { accessKeyId: credential.accessKeyId, secretAccessKey: credential.secretAccessKey };
    }
    if (credential.roleArn === null) {
      throw badRequest(`credentials "${credential.name}" hold neither access keys nor a role`);
    }
    const { AssumeRoleCommand, STSClient } = await loadSts();
    const sts = new STSClient({ ...clientConfig(region), ...(options.platformCredentials === undefined ? {} : { credentials: options.platformCredentials }) });
    try {
      const assumed = await sts.send(new AssumeRoleCommand({ RoleArn: credential.roleArn, RoleSessionName: 'slipway', ExternalId: credential.organizationId }));
      const keys = assumed.Credentials;
      if (keys?.AccessKeyId === undefined || keys.SecretAccessKey === undefined) {
        throw new AppError('unavailable', 'AWS STS AssumeRole answered without credentials; retry later');
      }
      return { accessKeyId: keys.AccessKeyId, secretAccessKey: keys.SecretAccessKey, sessionToken: keys.SessionToken };
    } catch (error) {
      if (typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'CredentialsProviderError') {
        throw badRequest(`role credentials "${credential.name}" need Slipway's own AWS identity to assume ${credential.roleArn}, and none is configured`);
      }
      throw classify(error, 'STS AssumeRole', credential);
    } finally {
      sts.destroy();
    }
  }

  async function describeRepositories(credentials: Awaited<ReturnType<typeof signingKeys>>, credential: AwsCredentialInput, region: string) {
    const { DescribeRepositoriesCommand, ECRClient } = await loadEcr();
    const ecr = new ECRClient({ ...clientConfig(region), credentials });
    try {
      await ecr.send(new DescribeRepositoriesCommand({ maxResults: 1 }));
    } catch (error) {
      throw classify(error, `ECR DescribeRepositories in ${region}`, credential);
    } finally {
      ecr.destroy();
    }
  }

  return {
    async checkClusterCredentials(credential, clusterRegion) {
      const credentials = await signingKeys(credential, ECR_CHECK_REGION);
      const { GetCallerIdentityCommand, STSClient } = await loadSts();
      const sts = new STSClient({ ...clientConfig(ECR_CHECK_REGION), credentials });
      let identity: CallerIdentity;
      try {
        const answer = await sts.send(new GetCallerIdentityCommand({}));
        if (answer.Account === undefined || !/^[0-9]{12}$/.test(answer.Account)) {
          throw new AppError('unavailable', 'AWS STS GetCallerIdentity answered without an account id; retry later');
        }
        identity = { accountId: answer.Account, arn: answer.Arn ?? '' };
      } catch (error) {
        throw classify(error, 'STS GetCallerIdentity', credential);
      } finally {
        sts.destroy();
      }
      await describeRepositories(credentials, credential, ECR_CHECK_REGION);
      if (clusterRegion !== ECR_CHECK_REGION) await describeRepositories(credentials, credential, clusterRegion);
      return identity;
    },

    async authorizeEcr(credential, region) {
      const credentials = await signingKeys(credential, region);
      const { ECRClient, GetAuthorizationTokenCommand } = await loadEcr();
      const ecr = new ECRClient({ ...clientConfig(region), credentials });
      try {
        const answer = await ecr.send(new GetAuthorizationTokenCommand({}));
        const data = answer.authorizationData?.[0];
        const decoded = data?.authorizationToken === undefined ? undefined : Buffer.from(data.authorizationToken, 'base64').toString('utf8');
        const separator = decoded?.indexOf(':') ?? -1;
        if (data?.proxyEndpoint === undefined || decoded === undefined || separator < 1) {
          throw new AppError('unavailable', `AWS ECR GetAuthorizationToken in ${region} answered without a usable token; retry later`);
        }
        return {
          registryUrl: data.proxyEndpoint,
          username: decoded.slice(0, separator),
          password: decoded.slice(separator + 1),
          expiresAt: data.expiresAt === undefined ? null : data.expiresAt.toISOString(),
        };
      } catch (error) {
        throw classify(error, `ECR GetAuthorizationToken in ${region}`, credential);
      } finally {
        ecr.destroy();
      }
    },
  };
}
