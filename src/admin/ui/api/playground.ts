// The Playgrounds' API: the listeners and routes a playground can go through, a chat streamed
// through one of them, an MCP route's tools listed and one called, and a CEL expression evaluated
// against a recorded request. Every call goes through gw's own listener as a client's would
// (playground/listener-client.ts); the POSTs are changes in the UI server's sense, so they carry
// its cross-site checks, and they exist only where the UI is (the admin listener). docs/ui.md
// "Playgrounds".
import type { DataPlaneConfig, RuleConfig } from '../../../contract/dataplane-config.ts';
import { evaluateCel } from '../playground/cel-evaluation.ts';
import { parseChatRequest, streamChat } from '../playground/chat.ts';
import {
  type ListenerTarget,
  parseListenerTarget,
  type ResolvedListener,
  resolveListener,
} from '../playground/listener-client.ts';
import { callMcpTool, listMcpTools } from '../playground/mcp-client.ts';
import { json, problem, STREAMED, type UiContext, type UiEndpoint } from './endpoint.ts';
import { isLive, liveTraffic } from './traffic.ts';

/** What a rule's backends are, for the playground to offer the right routes. */
type RuleKind = 'ai' | 'mcp' | 'models' | 'other';

function ruleKinds(config: DataPlaneConfig, rule: RuleConfig): RuleKind[] {
  const kinds = new Set<RuleKind>();
  if (rule.models) kinds.add('models');
  for (const ref of rule.backendRefs) {
    const backend = config.backends[ref.backend];
    if (backend?.kind === 'GwBackend' && backend.spec.ai) kinds.add('ai');
    else if (backend?.kind === 'GwBackend' && backend.spec.mcp) kinds.add('mcp');
    else kinds.add('other');
  }
  return [...kinds];
}

/** The served Gateways' HTTP(S) listeners, each with its routes' rules: paths and what they send to. */
function targets(context: UiContext) {
  const unbound = context.sources.unboundPorts();
  const out = [];
  for (const [gateway, config] of context.sources.controller.currentConfigs) {
    for (const listener of config.listeners) {
      if (listener.protocol !== 'HTTP' && listener.protocol !== 'HTTPS') continue;
      const rules = [
        ...listener.routes.map((route) => ({ route: route.route, hostnames: route.hostnames, rules: route.rules })),
      ];
      out.push({
        gateway,
        listener: listener.name,
        port: listener.port,
        protocol: listener.protocol,
        ...(listener.hostname !== undefined && { hostname: listener.hostname }),
        bound: !unbound.has(listener.port),
        routes: rules.map((route) => ({
          route: route.route,
          hostnames: route.hostnames,
          rules: route.rules.map((rule) => ({
            ...(rule.name !== undefined && { name: rule.name }),
            paths: rule.matches.map((match) => match.path),
            kinds: ruleKinds(config, rule),
          })),
        })),
        models: listener.modelRule !== undefined,
      });
    }
  }
  return out;
}

function resolved(context: UiContext, body: unknown, defaultPath?: string) {
  const target = parseListenerTarget(body, defaultPath);
  if ('problem' in target) return target;
  const listener = resolveListener(context.sources.controller.currentConfigs, context.sources.listenAddress, target);
  if ('problem' in listener) return listener;
  return { target, listener };
}

/**
 * An MCP playground call: the target (path `/mcp` unless given) resolved to a listener, then
 * `run`; a `problem` it returns is the client's mistake (400), a failure of the call gw's (502).
 */
function mcpEndpoint(
  path: string,
  run: (listener: ResolvedListener, target: ListenerTarget, body: unknown) => Promise<unknown>,
): UiEndpoint {
  return {
    method: 'POST',
    path,
    handle: async (context, request) => {
      const found = resolved(context, request.body, '/mcp');
      if ('problem' in found) return problem(400, found.problem);
      try {
        const answer = await run(found.listener, found.target, request.body);
        const mistake = (answer as { problem?: unknown }).problem;
        return typeof mistake === 'string' ? problem(400, mistake) : json(answer);
      } catch (error) {
        return problem(502, (error as Error).message);
      }
    },
  };
}

export const playgroundEndpoints: UiEndpoint[] = [
  { method: 'GET', path: '/ui/api/playground/targets', handle: (context) => json({ listeners: targets(context) }) },
  {
    method: 'POST',
    path: '/ui/api/playground/chat',
    handle: async (context, request) => {
      const chat = parseChatRequest(request.body);
      if ('problem' in chat) return problem(400, chat.problem);
      const listener = resolveListener(
        context.sources.controller.currentConfigs,
        context.sources.listenAddress,
        chat.target,
      );
      if ('problem' in listener) return problem(400, listener.problem);
      request.response.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        'x-accel-buffering': 'no',
      });
      await streamChat(listener, chat, request.response);
      return STREAMED;
    },
  },
  mcpEndpoint('/ui/api/playground/mcp/tools', (listener, target) => listMcpTools(listener, target.path, target.apiKey)),
  mcpEndpoint('/ui/api/playground/mcp/call', async (listener, target, body) => {
    const { tool, arguments: args = {} } = body as { tool?: unknown; arguments?: unknown };
    if (typeof tool !== 'string' || tool === '') return { problem: 'tool: the name of the tool to call' };
    if (typeof args !== 'object' || args === null || Array.isArray(args))
      return { problem: 'arguments: an object of the tool arguments' };
    return { result: await callMcpTool(listener, target.path, tool, args as Record<string, unknown>, target.apiKey) };
  }),
  {
    method: 'POST',
    path: '/ui/api/playground/cel',
    handle: async (context, request) => {
      const live = liveTraffic(context);
      if (!isLive(live)) return live;
      const { id, expression } = (request.body ?? {}) as { id?: unknown; expression?: unknown };
      if (typeof id !== 'string' || id === '') return problem(400, 'id: the id of a recorded request (Traffic page)');
      if (typeof expression !== 'string') return problem(400, 'expression: a CEL expression');
      const variables = await live.traffic.recordedVariables(id);
      if (!variables)
        return problem(404, `request ${JSON.stringify(id)} is no longer held (only the last few hundred are)`);
      const answer = await evaluateCel(expression, variables);
      return 'error' in answer ? problem(422, answer.error) : json(answer);
    },
  },
];
