/**
 * The AWS regions a self-managed cluster may name (the commercial partition, where ECR and EKS run). A region outside
 * this table answers 400 before any AWS call: a typo must not become an STS or ECR error.
 */
export const AWS_REGIONS = [
  'us-east-1',
  'us-east-2',
  'us-west-1',
  'us-west-2',
  'af-south-1',
  'ap-east-1',
  'ap-east-2',
  'ap-south-1',
  'ap-south-2',
  'ap-southeast-1',
  'ap-southeast-2',
  'ap-southeast-3',
  'ap-southeast-4',
  'ap-southeast-5',
  'ap-southeast-7',
  'ap-northeast-1',
  'ap-northeast-2',
  'ap-northeast-3',
  'ca-central-1',
  'ca-west-1',
  'eu-central-1',
  'eu-central-2',
  'eu-west-1',
  'eu-west-2',
  'eu-west-3',
  'eu-south-1',
  'eu-south-2',
  'eu-north-1',
  'il-central-1',
  'me-south-1',
  'me-central-1',
  'mx-central-1',
  'sa-east-1',
] as const;

export type AwsRegion = (typeof AWS_REGIONS)[number];

export function isAwsRegion(region: string): region is AwsRegion {
  return (AWS_REGIONS as readonly string[]).includes(region);
}

/** The default ECR registry of an account in a region. */
export function ecrRegistryHost(accountId: string, region: string): string {
  return `${accountId}.dkr.ecr.${region}.amazonaws.com`;
}
