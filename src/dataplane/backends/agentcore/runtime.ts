// Which Amazon Bedrock AgentCore runtime an `aws.agentCore` GwBackend names, and where it is
// invoked (docs/decisions/0050-agentcore-backend.md). `agentRuntimeId` is what InvokeAgentRuntime
// takes in its path: the runtime's ARN (arn:<partition>:bedrock-agentcore:<region>:<account>:runtime/<id>,
// agentgateway's only form), whose region picks the endpoint; or the bare runtime id, which AWS
// takes with an `accountId` query parameter — the account and region then come from gw's AWS
// environment (AWS_ACCOUNT_ID; the backend auth's cloudone.region, AWS_REGION, AWS_DEFAULT_REGION).
// The endpoint is bedrock-agentcore.<region>.<partition's DNS suffix> unless
// AWS_ENDPOINT_URL_BEDROCK_AGENTCORE, then AWS_ENDPOINT_URL, say otherwise, as the AWS SDKs read them.
import type { CloudoneAgentCore } from '../../../api/types/backends.ts';
import { modelIdSegment } from '../../ai/providers/zeta.ts';
import {
  awsEndpointVariables,
  isServiceEndpointProblem,
  type ServiceEndpoint,
  serviceEndpoint,
} from '../../upstream/service-endpoint.ts';

/** The AWS SigV4 signing name of the AgentCore data plane (the SDK's bedrock-agentcore client). */
export const AGENTCORE_SIGNING_NAME = 'bedrock-agentcore';

/** The DNS suffix of each AWS partition that has AgentCore's endpoints (the SDK's partition table). */
const PARTITION_DNS_SUFFIXES: Record<string, string> = {
  aws: 'amazonaws.com',
  'aws-cn': 'amazonaws.com.cn',
  'aws-us-gov': 'amazonaws.com',
};

// A region is a host-name label: us-east-1, eu-central-2, us-gov-west-1.
const REGION = /^[a-z]{2}(?:-[a-z]+)+-\d+$/;
const ACCOUNT = /^\d{12}$/;
// A runtime id as AgentCore makes them: its name, a dash and ten letters or digits (my_agent-a1B2c3D4e5).
const RUNTIME_ID = /^[A-Za-z][A-Za-z0-9_]{0,99}-[A-Za-z0-9]{10}$/;
const ARN = /^arn:([a-z-]+):bedrock-agentcore:([^:]*):([^:]*):runtime\/(.+)$/;

/** One runtime, ready to invoke. */
export interface AgentCoreRuntime {
  /** Where InvokeAgentRuntime is sent. */
  endpoint: ServiceEndpoint;
  /** The signing region: the ARN's, or the one the environment gave for a bare id. */
  region: string;
  /** /runtimes/{agentRuntimeArn}/invocations, the identifier encoded as the SDK encodes a URI label. */
  path: string;
  /** qualifier and, for a bare id, accountId, as the SDK writes them ('' for neither). */
  query: string;
}

/** Why the runtime cannot be invoked: the field and the fix. */
export interface RuntimeProblem {
  field: string;
  message: string;
}

export function isRuntimeProblem(value: AgentCoreRuntime | RuntimeProblem): value is RuntimeProblem {
  return 'message' in value;
}

/**
 * The runtime of `spec`. `signingRegion` is the backend auth's cloudone.region when it sets one:
 * the region of a bare id, and for an ARN it must agree with the ARN's.
 */
export function agentCoreRuntime(
  spec: CloudoneAgentCore,
  signingRegion: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): AgentCoreRuntime | RuntimeProblem {
  const id = spec.agentRuntimeId.trim();
  const located = id.startsWith('arn:') ? fromArn(id, signingRegion) : fromBareId(id, signingRegion, env);
  if ('message' in located) return located;
  const suffix = PARTITION_DNS_SUFFIXES[located.partition];
  const variables = awsEndpointVariables('BEDROCK_AGENTCORE', env);
  if (suffix === undefined && !variables.some((name) => env[name]?.trim()))
    return {
      field: 'spec.aws.agentCore.agentRuntimeId',
      message: `the partition ${located.partition} has no AgentCore endpoint gw knows; set AWS_ENDPOINT_URL_BEDROCK_AGENTCORE in gw's environment`,
    };
  const endpoint = serviceEndpoint(
    `https://${AGENTCORE_SIGNING_NAME}.${located.region}.${suffix ?? PARTITION_DNS_SUFFIXES.aws}`,
    variables,
    env,
  );
  if (isServiceEndpointProblem(endpoint)) return { field: 'the AgentCore endpoint', message: endpoint.message };
  const query = new URLSearchParams();
  if (spec.qualifier !== undefined) query.set('qualifier', spec.qualifier);
  if (located.accountId !== undefined) query.set('accountId', located.accountId);
  return {
    endpoint,
    region: located.region,
    path: `${endpoint.basePath}/runtimes/${modelIdSegment(id)}/invocations`,
    query: query.toString(),
  };
}

interface Located {
  partition: string;
  region: string;
  /** Sent with a bare id only: an ARN names its account itself. */
  accountId?: string;
}

function fromArn(arn: string, signingRegion: string | undefined): Located | RuntimeProblem {
  const match = ARN.exec(arn);
  const field = 'spec.aws.agentCore.agentRuntimeId';
  if (match === null)
    return {
      field,
      message: `"${arn}" is not an AgentCore runtime ARN (arn:aws:bedrock-agentcore:<region>:<account>:runtime/<id>)`,
    };
  const [, partition, region, account] = match as unknown as [string, string, string, string];
  if (!REGION.test(region)) return { field, message: `the ARN's region "${region}" is not an AWS region` };
  if (!ACCOUNT.test(account)) return { field, message: `the ARN's account "${account}" is not a 12-digit AWS account` };
  if (signingRegion !== undefined && signingRegion !== region)
    return {
      field: 'backend policy auth.cloudone.region',
      message: `the runtime is in ${region} (its ARN) but the backend auth signs for ${signingRegion}; remove region or set it to ${region}`,
    };
  return { partition, region };
}

function fromBareId(id: string, signingRegion: string | undefined, env: NodeJS.ProcessEnv): Located | RuntimeProblem {
  const field = 'spec.aws.agentCore.agentRuntimeId';
  if (!RUNTIME_ID.test(id))
    return {
      field,
      message: `"${id}" is neither an AgentCore runtime ARN nor a runtime id (<name>-<10 letters or digits>)`,
    };
  const accountId = env.AWS_ACCOUNT_ID?.trim();
  if (!accountId || !ACCOUNT.test(accountId))
    return {
      field,
      message: `the runtime id ${id} names no account, which InvokeAgentRuntime needs: give the runtime's ARN (arn:aws:bedrock-agentcore:<region>:<account>:runtime/${id}), or set AWS_ACCOUNT_ID (12 digits) in gw's environment`,
    };
  const region = signingRegion ?? (env.AWS_REGION?.trim() || env.AWS_DEFAULT_REGION?.trim());
  if (!region || !REGION.test(region))
    return {
      field,
      message: `the runtime id ${id} names no region: give the runtime's ARN, set the backend auth's cloudone.region, or set AWS_REGION in gw's environment`,
    };
  const partition = region.startsWith('cn-') ? 'aws-cn' : region.startsWith('us-gov-') ? 'aws-us-gov' : 'aws';
  return { partition, region, accountId };
}
