// The backend kinds the data plane serves, by what a backendRef names: a Service, or a GwBackend
// by the one kind field its spec sets. A kind without an implementation is refused here with the
// reason (its requests are answered with 500). The GwModels of a rule or listener are served by
// the models kind.
import type { BackendObjectConfig, BackendRefConfig } from '../../contract/dataplane-config.ts';
import { aiKind } from '../ai/ai-backend.ts';
import { MODEL_ANSWERS, modelsKind } from '../ai/models.ts';
import { mcpKind } from '../mcp/backend.ts';
import type { GatewayAnswers } from '../proxy/answers.ts';
import type { BackendType } from '../telemetry/request-record.ts';
import { a2aKind } from './a2a/a2a-backend.ts';
import { agentCoreKind } from './agentcore/agentcore-backend.ts';
import {
  type Backend,
  type BackendKind,
  type BackendRefInput,
  type BackendRefusal,
  backendRefusal,
  type ModelsInput,
} from './backend.ts';
import { dynamicForwardProxy } from './forward-proxy/dynamic-forward-proxy.ts';
import { httpKind } from './http.ts';

type GwBackendKindField = 'static' | 'ai' | 'mcp' | 'a2a' | 'aws' | 'dynamicForwardProxy';

/** Each GwBackend kind field: its implementation, or why it is not served. */
const GW_BACKEND_KINDS: Record<GwBackendKindField, BackendKind<BackendRefInput> | string> = {
  static: httpKind,
  ai: aiKind,
  mcp: mcpKind,
  a2a: a2aKind,
  aws: agentCoreKind,
  dynamicForwardProxy,
};

function kindField(object: BackendObjectConfig & { kind: 'GwBackend' }): GwBackendKindField | undefined {
  return (Object.keys(GW_BACKEND_KINDS) as GwBackendKindField[]).find((name) => object.spec[name] !== undefined);
}

function kindOf(object: BackendObjectConfig): BackendKind<BackendRefInput> | string {
  if (object.kind === 'Service') return httpKind;
  if (object.kind === 'InferencePool')
    return "an InferencePool is sent to through a custom LLM provider's backendRef (an ai GwBackend or a GwModel), not by a route";
  const field = kindField(object);
  return field === undefined ? 'the GwBackend sets no backend kind' : GW_BACKEND_KINDS[field];
}

/** Telemetry's backend type of each GwBackend kind field (agentgateway's values). */
const TYPES: Record<GwBackendKindField, BackendType> = {
  static: 'static',
  ai: 'ai',
  mcp: 'mcp',
  dynamicForwardProxy: 'dynamic',
  // An A2A agent is a static host that speaks A2A (agentgateway: an a2a policy on a host backend).
  a2a: 'static',
  // agentgateway's type of an AWS backend.
  aws: 'unknown',
};

/** The backend's type as telemetry names it, served or not. */
export function backendTypeOf(object: BackendObjectConfig): BackendType {
  if (object.kind === 'Service') return 'service';
  if (object.kind === 'InferencePool') return 'unknown';
  const field = kindField(object);
  return field === undefined ? 'unknown' : TYPES[field];
}

/** Compiles the backend a backendRef names with the kind that serves it. */
export function compileBackendRef(input: BackendRefInput): Backend | BackendRefusal {
  const kind = kindOf(input.object);
  // 501: the backend is valid, this data plane does not implement its kind.
  if (typeof kind === 'string') return backendRefusal(`backend ${input.key}: ${kind}`, 501);
  return kind.compile(input);
}

/** How gw words its answers for a refused reference to `object` (plain text unless its kind says). */
export function refusedAnswersOf(
  object: BackendObjectConfig | undefined,
  ref: BackendRefConfig,
): ((path: string) => GatewayAnswers) | undefined {
  const kind = object && kindOf(object);
  return typeof kind === 'object' ? kind.refusedAnswers?.(ref) : undefined;
}

/** How gw words its answers for the GwModels of a rule or listener when they are refused. */
export function refusedModelAnswers(): (path: string) => GatewayAnswers {
  return MODEL_ANSWERS;
}

/** Compiles the GwModels a rule or listener serves. */
export function compileModelsBackend(input: ModelsInput): Backend | BackendRefusal {
  return modelsKind.compile(input);
}
