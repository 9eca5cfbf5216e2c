// A stand-in for Azure OpenAI (the "betaalpha" family, and the Azure OpenAI and Foundry resources
// of the "beta" family): OpenAI's formats at Azure's paths. The key is required in the `api-key`
// header, or an Entra ID access token (`entraToken`) as `Authorization: Bearer`. Dated API versions: /openai/deployments/{deployment}/
// chat/completions and /embeddings (the deployment must be one of `deployments`; the body's model
// is ignored and answered as the deployment), /openai/responses and /openai/models, each with a
// required ?api-version. The v1 API: /openai/v1/{chat/completions,responses,embeddings,models},
// the deployment named by the body's model, api-version not needed (preview allowed). A Foundry
// project (one of `projects`) serves the same v1 API at /api/projects/{project}/openai/v1/. A
// Foundry resource's Claude deployments (`claudeDeployments`) answer the Anthropic Messages API at
// /anthropic/v1/messages and /count_tokens (anthropic-version required, Anthropic's error format);
// there the key may also come as `x-api-key`.
import type { IncomingHttpHeaders } from 'node:http';
import { anthropicDialect } from './anthropic-mock.ts';
import { isObject } from './deterministic.ts';
import {
  type MockServer,
  type ParsedBody,
  type ProviderDialect,
  type ProviderError,
  type RecordedRequest,
  startMockServer,
} from './mock-server.ts';
import { openAiDialect } from './openai-mock.ts';

export interface AzureOpenAiMockOptions {
  /** The key required in `api-key`. */
  apiKey: string;
  /** The deployments of the resource. */
  deployments: string[];
  /** The Foundry projects of the resource (none: an Azure OpenAI resource). */
  projects?: string[];
  /** An Entra ID access token accepted as `Authorization: Bearer` instead of the key. */
  entraToken?: string;
  /** The Claude deployments of a Foundry resource, served at /anthropic/v1. */
  claudeDeployments?: string[];
}

const DEPLOYMENT_PATH = /^\/openai\/deployments\/([^/]+)\/(chat\/completions|embeddings)$/;
const DATED_PATHS: Record<string, string> = { '/openai/responses': '/v1/responses', '/openai/models': '/v1/models' };
const V1_PREFIX = '/openai/v1/';
const PROJECT_V1_PATH = /^\/api\/projects\/([^/]+)\/openai\/v1\/(.+)$/;
const ANTHROPIC_PREFIX = '/anthropic/v1/';

export function startAzureOpenAiMock(options: AzureOpenAiMockOptions): Promise<MockServer> {
  const openai = openAiDialect({ models: options.deployments });
  const anthropic = anthropicDialect({ models: options.claudeDeployments ?? [] });
  const notFound = (message: string, code: string) => openai.errorReply({ status: 404, message, code });

  // The OpenAI answer of the same request at OpenAI's path, with the model Azure would use.
  const answerAs = (request: RecordedRequest, parsed: ParsedBody, path: string, deployment?: string) => {
    const body: ParsedBody =
      deployment !== undefined && parsed.json && isObject(parsed.value)
        ? { json: true, value: { ...parsed.value, model: deployment } }
        : parsed;
    return openai.answer({ ...request, path }, body);
  };

  const dialect: ProviderDialect = {
    replyHeaders: () => ({ ...openai.replyHeaders(), 'apim-request-id': 'mock' }),
    errorReply: openai.errorReply,
    checkHeaders: (headers: IncomingHttpHeaders, requiredKey): ProviderError | undefined => {
      const key = headers['api-key'] ?? headers['x-api-key'];
      const bearer = options.entraToken === undefined ? undefined : `Bearer ${options.entraToken}`;
      if (bearer !== undefined && key === undefined && headers.authorization === bearer) return undefined;
      if (key === undefined || key !== requiredKey) {
        return {
          status: 401,
          code: '401',
          message: 'Access denied due to invalid subscription key or wrong API endpoint.',
        };
      }
      return undefined;
    },
    fixedAnswer: openai.fixedAnswer,
    answer(request, parsed) {
      const { path } = request;
      if (path.startsWith(V1_PREFIX)) return answerAs(request, parsed, `/v1/${path.slice(V1_PREFIX.length)}`);
      if (path.startsWith(ANTHROPIC_PREFIX)) {
        if (!request.headers['anthropic-version']) {
          return anthropic.errorReply({ status: 400, message: 'anthropic-version: header is required' });
        }
        return anthropic.answer({ ...request, path: `/v1/${path.slice(ANTHROPIC_PREFIX.length)}` }, parsed);
      }
      const project = PROJECT_V1_PATH.exec(path);
      if (project !== null) {
        if (!(options.projects ?? []).includes(decodeURIComponent(project[1]!))) {
          return notFound('Project not found', 'NotFound');
        }
        return answerAs(request, parsed, `/v1/${project[2]}`);
      }
      const apiVersion = new URL(request.url, 'http://stand-in').searchParams.get('api-version');
      if (apiVersion === null || apiVersion === '') {
        return openai.errorReply({ status: 404, message: 'Resource not found', code: '404' });
      }
      const scoped = DEPLOYMENT_PATH.exec(path);
      if (scoped !== null) {
        const deployment = decodeURIComponent(scoped[1]!);
        if (!options.deployments.includes(deployment)) {
          return notFound('The API deployment for this resource does not exist.', 'DeploymentNotFound');
        }
        return answerAs(request, parsed, `/v1/${scoped[2]}`, deployment);
      }
      const dated = DATED_PATHS[path];
      if (dated !== undefined) return answerAs(request, parsed, dated);
      return notFound('Resource not found', '404');
    },
  };
  return startMockServer(dialect, { apiKey: options.apiKey });
}

/** The last request the stand-in received, with its query read (Azure's paths carry api-version). */
export function lastAzureRequest(azure: MockServer): RecordedRequest & { query: URLSearchParams } {
  const sent = azure.requests.at(-1);
  if (sent === undefined) throw new Error('the Azure stand-in has received no request');
  return { ...sent, query: new URL(sent.url, 'http://stand-in').searchParams };
}
