// The `ai` backend kind: an `ai` GwBackend's providers (one, or priority groups of named ones)
// compiled with their effective backend policy (connection, auth, health, AI request policy),
// and the request flow: read and check the body, apply the AI policies, then try providers in
// the balancer's order until one answers — failing over only while nothing has been sent to the
// client. A WebSocket upgrade on a Realtime path is a session instead (realtime/session.ts).

import type { RouteType } from '../../api/types/ai.ts';
import type { NamedLLMProvider } from '../../api/types/llm-provider.ts';
import { sectionNamespaces } from '../../contract/dataplane-config.ts';
import { systemClock } from '../../util/clock.ts';
import {
  type Backend,
  type BackendKind,
  type BackendRefInput,
  type BackendRefusal,
  backendRefusal,
  type RoutedRequest,
} from '../backends/backend.ts';
import { type BackendHealthReport, relativeView } from '../balancing/health-report.ts';
import { type GroupProvider, PriorityGroupBalancer } from '../balancing/priority-groups.ts';
import type { GatewayAnswers } from '../proxy/answers.ts';
import { webSocketUpgradeOf } from '../proxy/websocket-upgrade.ts';
import { compileEndpoint, type ProviderEndpoint } from './endpoint.ts';
import { answersByRouteType } from './llm-answers.ts';
import { type Candidate, readLlmRequest, runAttempts } from './llm-request.ts';
import { compileRouteTypes } from './policies/index.ts';
import { serveRealtime } from './realtime/session.ts';

/** The `ai` kind: a GwBackend reached through one backendRef (its effective policies are the ref's). */
export const aiKind: BackendKind<BackendRefInput> = {
  refusedAnswers: (ref) => answersByRouteType(compileRouteTypes(ref.policy.ai?.routes)),
  compile(input: BackendRefInput): Backend | BackendRefusal {
    const where = input.key;
    const spec = input.object.kind === 'GwBackend' ? input.object.spec.ai : undefined;
    if (!spec) return backendRefusal(`${where} is not an ai backend`);
    const groups: NamedLLMProvider[][] = spec.provider
      ? [[{ ...spec.provider, name: input.name }]]
      : (spec.groups ?? []).map((group) => group.providers);
    const basePolicy = input.ref.policy;
    const built: GroupProvider<ProviderEndpoint>[][] = [];
    for (const [groupIndex, group] of groups.entries()) {
      const members: (typeof built)[number] = [];
      for (const [index, named] of group.entries()) {
        const field = spec.provider ? 'spec.ai.provider' : `spec.ai.groups[${groupIndex}].providers[${index}]`;
        // A provider's effective policy: the controller merged GwPolicy < GwBackend < provider per section.
        const section = spec.provider ? undefined : named.name;
        const policy = section === undefined ? basePolicy : (input.ref.sections?.[section] ?? basePolicy);
        const endpoint = compileEndpoint(named, policy, {
          namespace: input.namespace,
          namespaces: sectionNamespaces(input.ref, section),
          context: input.context,
        });
        if ('message' in endpoint)
          return backendRefusal(`${where} ${field}${endpoint.field ? `.${endpoint.field}` : ''}: ${endpoint.message}`);
        // The provider's own extAuth and transformation, run on each of its attempts (decision 0045).
        const own = section === undefined ? undefined : input.subBackendPolicies?.get(section);
        if (own) endpoint.requestPolicies = own.steps;
        members.push({ name: named.name, provider: endpoint, health: policy.health });
      }
      built.push(members);
    }
    return new AiBackend(
      `${input.namespace}/${input.name}`,
      new PriorityGroupBalancer(built, { now: systemClock.monotonicMs, random: Math.random }),
      built.reduce((count, group) => count + group.length, 0),
      compileRouteTypes(basePolicy.ai?.routes),
    );
  },
};

class AiBackend implements Backend {
  readonly type = 'ai';
  readonly name: string;
  readonly #balancer: PriorityGroupBalancer<ProviderEndpoint>;
  /** Every provider is tried at most once per request. */
  readonly #providerCount: number;
  /** The route type of a request path (BackendAI.routes of the backend's effective policy). */
  readonly #routeTypeOf: (path: string) => RouteType;

  constructor(
    name: string,
    balancer: PriorityGroupBalancer<ProviderEndpoint>,
    providerCount: number,
    routeTypeOf: (path: string) => RouteType,
  ) {
    this.name = name;
    this.#balancer = balancer;
    this.#providerCount = providerCount;
    this.#routeTypeOf = routeTypeOf;
    this.answersFor = answersByRouteType(routeTypeOf);
  }

  /** gw's own answers in the API format of the route type `path` has here. */
  readonly answersFor: (path: string) => GatewayAnswers;

  health(): BackendHealthReport {
    const now = systemClock.monotonicMs();
    return { providers: this.#balancer.snapshot().map((provider) => relativeView(provider, now)) };
  }

  async serve(routed: RoutedRequest): Promise<void> {
    const routeType = this.#routeTypeOf(routed.forward.path);
    // A WebSocket upgrade on a Realtime path is a session; without one, readLlmRequest refuses it.
    const upgrade = routeType === 'Realtime' ? webSocketUpgradeOf(routed.req) : undefined;
    if (upgrade !== undefined) return serveRealtime(routed, upgrade, this.#providerCount, this.#candidates());
    const request = await readLlmRequest(routed, routeType, routed.route.maxBufferBytes);
    if (!request) return;
    await runAttempts(routed, request, this.#providerCount, this.#candidates());
  }

  /** The providers of one request, in the balancer's order, each reporting how its attempt went. */
  #candidates(): () => Candidate | undefined {
    const balancer = this.#balancer;
    const attempts = balancer.startRequest();
    return () => {
      const selected = attempts.next();
      if (!selected) return undefined;
      return { endpoint: selected.provider, report: (outcome) => balancer.report(selected, outcome) };
    };
  }
}
