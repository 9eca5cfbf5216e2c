// Which AgentCore runtime an aws.agentCore GwBackend names and where it is invoked
// (src/dataplane/backends/agentcore/runtime.ts): an ARN's region and partition pick the endpoint,
// a bare runtime id takes its account and region from gw's environment, the AWS SDKs' endpoint
// variables replace the endpoint, and every configuration that cannot be invoked is refused
// naming the field or variable to fix.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type AgentCoreRuntime,
  agentCoreRuntime,
  isRuntimeProblem,
  type RuntimeProblem,
} from '../../../src/dataplane/backends/agentcore/runtime.ts';

const ARN = 'arn:aws:bedrock-agentcore:eu-west-1:123456789012:runtime/support_agent-a1B2c3D4e5';

function runtime(
  agentCore: { agentRuntimeId: string; qualifier?: string },
  env: NodeJS.ProcessEnv = {},
  region?: string,
): AgentCoreRuntime {
  const found = agentCoreRuntime(agentCore, region, env);
  assert.ok(!isRuntimeProblem(found), isRuntimeProblem(found) ? found.message : '');
  return found;
}

function problem(
  agentCore: { agentRuntimeId: string; qualifier?: string },
  env: NodeJS.ProcessEnv = {},
  region?: string,
): RuntimeProblem {
  const found = agentCoreRuntime(agentCore, region, env);
  assert.ok(isRuntimeProblem(found), 'expected a refusal');
  return found;
}

describe('AgentCore runtime of an aws.agentCore backend', () => {
  it("invokes an ARN at its region's endpoint, the ARN encoded as the SDK encodes the path label", () => {
    const found = runtime({ agentRuntimeId: ARN, qualifier: 'prod' });
    assert.deepEqual(found.endpoint.destination, {
      protocol: 'https:',
      host: 'bedrock-agentcore.eu-west-1.amazonaws.com',
      port: 443,
    });
    assert.equal(found.region, 'eu-west-1');
    assert.equal(
      found.path,
      '/runtimes/arn%3Aaws%3Abedrock-agentcore%3Aeu-west-1%3A123456789012%3Aruntime%2Fsupport_agent-a1B2c3D4e5/invocations',
    );
    assert.equal(found.query, 'qualifier=prod');
    assert.equal(runtime({ agentRuntimeId: ARN }).query, '');
  });

  it("uses the China partition's DNS suffix, and refuses a partition it has no endpoint for unless one is set", () => {
    const china = runtime({
      agentRuntimeId: 'arn:aws-cn:bedrock-agentcore:cn-north-1:123456789012:runtime/a-0123456789',
    });
    assert.equal(china.endpoint.destination.host, 'bedrock-agentcore.cn-north-1.amazonaws.com.cn');
    const iso = 'arn:aws-iso:bedrock-agentcore:us-iso-east-1:123456789012:runtime/a-0123456789';
    assert.match(problem({ agentRuntimeId: iso }).message, /AWS_ENDPOINT_URL_BEDROCK_AGENTCORE/);
    assert.equal(
      runtime({ agentRuntimeId: iso }, { AWS_ENDPOINT_URL_BEDROCK_AGENTCORE: 'https://agentcore.internal' }).endpoint
        .destination.host,
      'agentcore.internal',
    );
  });

  it('takes the endpoint from AWS_ENDPOINT_URL_BEDROCK_AGENTCORE, then AWS_ENDPOINT_URL, unless told to ignore them', () => {
    const specific = runtime(
      { agentRuntimeId: ARN },
      { AWS_ENDPOINT_URL_BEDROCK_AGENTCORE: 'http://127.0.0.1:9000/prefix/', AWS_ENDPOINT_URL: 'http://other:1' },
    );
    assert.deepEqual(specific.endpoint.destination, { protocol: 'http:', host: '127.0.0.1', port: 9000 });
    assert.ok(specific.path.startsWith('/prefix/runtimes/'));
    assert.equal(
      runtime({ agentRuntimeId: ARN }, { AWS_ENDPOINT_URL: 'http://other:1' }).endpoint.destination.host,
      'other',
    );
    assert.equal(
      runtime(
        { agentRuntimeId: ARN },
        { AWS_ENDPOINT_URL: 'http://other:1', AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true' },
      ).endpoint.destination.host,
      'bedrock-agentcore.eu-west-1.amazonaws.com',
    );
    assert.match(
      problem({ agentRuntimeId: ARN }, { AWS_ENDPOINT_URL_BEDROCK_AGENTCORE: 'ftp://x' }).message,
      /AWS_ENDPOINT_URL_BEDROCK_AGENTCORE in gw's environment must be an http or https URL/,
    );
  });

  it("refuses an ARN that is not an AgentCore runtime's, and one whose region the backend auth contradicts", () => {
    const notRuntime = problem({ agentRuntimeId: 'arn:aws:bedrock:eu-west-1:123456789012:agent/x' });
    assert.equal(notRuntime.field, 'spec.aws.agentCore.agentRuntimeId');
    assert.match(notRuntime.message, /not an AgentCore runtime ARN/);
    assert.match(
      problem({ agentRuntimeId: ARN.replace('123456789012', '1234') }).message,
      /not a 12-digit AWS account/,
    );
    const mismatch = problem({ agentRuntimeId: ARN }, {}, 'us-east-1');
    assert.equal(mismatch.field, 'backend policy auth.cloudone.region');
    assert.match(mismatch.message, /runtime is in eu-west-1/);
    assert.equal(runtime({ agentRuntimeId: ARN }, {}, 'eu-west-1').region, 'eu-west-1');
  });

  it('sends a bare runtime id with accountId from AWS_ACCOUNT_ID, in the backend auth region or AWS_REGION', () => {
    const env = { AWS_ACCOUNT_ID: '210987654321', AWS_REGION: 'us-west-2' };
    const found = runtime({ agentRuntimeId: 'support_agent-a1B2c3D4e5', qualifier: 'prod' }, env);
    assert.equal(found.path, '/runtimes/support_agent-a1B2c3D4e5/invocations');
    assert.equal(found.query, 'qualifier=prod&accountId=210987654321');
    assert.equal(found.endpoint.destination.host, 'bedrock-agentcore.us-west-2.amazonaws.com');
    assert.equal(runtime({ agentRuntimeId: 'support_agent-a1B2c3D4e5' }, env, 'eu-central-1').region, 'eu-central-1');
    assert.equal(
      runtime(
        { agentRuntimeId: 'support_agent-a1B2c3D4e5' },
        { AWS_ACCOUNT_ID: '210987654321', AWS_DEFAULT_REGION: 'ap-south-1' },
      ).region,
      'ap-south-1',
    );
  });

  it('refuses a bare runtime id without an account or a region, and what is no runtime id, naming the fix', () => {
    assert.match(
      problem({ agentRuntimeId: 'support_agent-a1B2c3D4e5' }, { AWS_REGION: 'us-west-2' }).message,
      /give the runtime's ARN .* or set AWS_ACCOUNT_ID/,
    );
    assert.match(
      problem({ agentRuntimeId: 'support_agent-a1B2c3D4e5' }, { AWS_ACCOUNT_ID: '210987654321' }).message,
      /set the backend auth's cloudone.region, or set AWS_REGION/,
    );
    assert.match(problem({ agentRuntimeId: 'not an id' }).message, /neither an AgentCore runtime ARN nor a runtime id/);
  });
});
