// The signing service and region of a cloudone credential when the spec leaves them unset
// (docs/decisions/0014-cloudone-signing.md): the service from the typed backend (an AgentCore
// runtime signs as `bedrock-agentcore`), the provider family (Bedrock signs as `bedrock`) or the
// AWS host name; the region from the typed backend, the AWS host name, or the
// environment the AWS SDK reads (AWS_REGION, the profile's region). Neither found is a
// configuration error naming the field to set.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { CloudoneAuth } from '../../../../api/types/backend-auth.ts';
import { AuthConfigError } from '../errors.ts';
import type { BackendTarget } from '../kind.ts';
import { sts } from './sdk.ts';

/** The signing name of services whose host name prefix is another name. */
const SIGNING_NAMES: Record<string, string> = {
  'bedrock-runtime': 'bedrock',
  'bedrock-agent-runtime': 'bedrock',
  'bedrock-agent': 'bedrock',
};

/** Provider families whose vendor is an AWS service, by the service they sign for. */
const FAMILY_SERVICES: Record<string, string> = { zeta: 'bedrock' };

// <service>.<region>.amazonaws.com, also a VPC endpoint's vpce-…<service>.<region>.vpce.amazonaws.com
// and the China partition's amazonaws.com.cn; a FIPS endpoint's service ends in -fips.
const AWS_HOST = /(?:^|\.)([a-z0-9-]+)\.([a-z]{2}(?:-[a-z]+)+-\d+)\.(?:vpce\.)?amazonaws\.com(?:\.cn)?$/;

/** What an AWS service host name says: its signing service and region. */
export function awsHost(host: string | undefined): { service: string; region: string } | undefined {
  const match = host === undefined ? null : AWS_HOST.exec(host.toLowerCase());
  if (match === null) return undefined;
  const prefix = match[1]!.replace(/-fips$/, '');
  return { service: SIGNING_NAMES[prefix] ?? prefix, region: match[2]! };
}

/** What goes into a SigV4 credential scope: no '/', no space. */
const SCOPE_PART = /^[A-Za-z0-9._-]+$/;

export function signingService(config: CloudoneAuth, target: BackendTarget | undefined): string | AuthConfigError {
  if (config.serviceName !== undefined) {
    return SCOPE_PART.test(config.serviceName)
      ? config.serviceName
      : new AuthConfigError('cloudone.serviceName', 'must be an AWS signing name (letters, digits, ".", "_", "-")');
  }
  const family = target?.family === undefined ? undefined : FAMILY_SERVICES[target.family];
  const service = target?.service ?? family ?? awsHost(target?.host)?.service;
  if (service !== undefined) return service;
  return new AuthConfigError(
    'cloudone.serviceName',
    `the AWS service to sign for cannot be derived from the backend host ${target?.host ?? '(none)'}; set serviceName (for example bedrock, execute-api, lambda)`,
  );
}

/** A region known when the configuration is compiled, or one the SDK's region loaders give on first use. */
export type RegionSource = { fixed: string } | { ambient: () => Promise<string> };

/** The AWS SDK's shared config file, where a profile's region may be set. */
function sharedConfigFile(): string {
  return process.env.AWS_CONFIG_FILE ?? join(homedir(), '.aws', 'config');
}

/**
 * The region the AWS SDK finds on its own: AWS_REGION, then the region of the profile (AWS_PROFILE,
 * else default) in the shared config file; then AWS_DEFAULT_REGION, which the AWS CLI reads.
 */
async function ambientRegion(): Promise<string> {
  try {
    return await new (sts().STSClient)({}).config.region();
  } catch (error) {
    const fallback = process.env.AWS_DEFAULT_REGION;
    if (fallback) return fallback;
    throw error;
  }
}

export function signingRegion(config: CloudoneAuth, target: BackendTarget | undefined): RegionSource | AuthConfigError {
  const region = config.region ?? target?.region ?? awsHost(target?.host)?.region ?? process.env.AWS_REGION;
  if (region !== undefined && region !== '') {
    return SCOPE_PART.test(region)
      ? { fixed: region }
      : new AuthConfigError('cloudone.region', `"${region}" is not an AWS region name`);
  }
  if (process.env.AWS_DEFAULT_REGION || existsSync(sharedConfigFile())) return { ambient: ambientRegion };
  return new AuthConfigError(
    'cloudone.region',
    'no signing region: the backend is not an AWS host, and neither AWS_REGION nor an AWS config file gives one; set region',
  );
}
