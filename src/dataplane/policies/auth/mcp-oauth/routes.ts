// Which MCP OAuth endpoint answers a well-known path on a listener. The well-known paths are not
// under any MCP route (/.well-known/oauth-protected-resource/mcp is not /mcp), so the listener
// collects the endpoints of its rules when it is compiled and the request handler asks here
// before routing: the path after the well-known prefix is matched against the listener's routes
// as an MCP request (POST) would be, and the rule it reaches names the endpoint. The root forms
// (no path after the prefix) belong to the rule serving "/", else to the listener's only MCP URL.
// A path no endpoint claims goes on to routing as usual.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RuleConfig } from '../../../../contract/dataplane-config.ts';
import { sendLocalResponse } from '../../../proxy/direct-response.ts';
import { requestOrigin } from '../../../proxy/request-origin.ts';
import type { RouteTable } from '../../../routing/route-table.ts';
import type { RequestRecord } from '../../../telemetry/request-record.ts';
import type { LocalResponse } from '../../types.ts';
import type { McpOAuthEndpoint } from './endpoint.ts';
import { methodNotAllowed, preflight } from './responses.ts';
import { AUTHORIZE_SUFFIX, parseWellKnownPath, REGISTRATION_SUFFIX, TOKEN_SUFFIX } from './well-known.ts';

/** An endpoint with the route it belongs to (for the access log). */
export interface RoutedEndpoint {
  endpoint: McpOAuthEndpoint;
  /** "ns/name" of the HTTPRoute, '' for a listener-wide (PreRouting) policy. */
  route: string;
  /** The rule's name, '' when it has none. */
  rule: string;
}

type Action = 'protected-resource' | 'authorization-server' | 'register' | 'token' | 'authorize';

export class McpOAuthRoutes {
  private readonly byRule: ReadonlyMap<RuleConfig, RoutedEndpoint>;
  private readonly listenerWide: RoutedEndpoint | undefined;
  private readonly table: RouteTable;
  /** The endpoint of the root forms when nothing serves "/": the listener's only one. */
  private readonly only: RoutedEndpoint | undefined;

  constructor(
    byRule: ReadonlyMap<RuleConfig, RoutedEndpoint>,
    listenerWide: RoutedEndpoint | undefined,
    table: RouteTable,
  ) {
    this.byRule = byRule;
    this.listenerWide = listenerWide;
    this.table = table;
    const all = [...byRule.values(), ...(listenerWide ? [listenerWide] : [])];
    this.only = all.length === 1 ? all[0] : undefined;
  }

  /**
   * Answers `path` (normalised, known to start like a well-known path) when an endpoint claims
   * it; false when none does and the request goes on to routing.
   */
  async serve(
    req: IncomingMessage,
    res: ServerResponse,
    record: RequestRecord,
    path: string,
    scheme: string,
  ): Promise<boolean> {
    const parsed = parseWellKnownPath(path);
    if (!parsed) return false;
    const target = this.target(parsed.document, parsed.rest, req, record.host);
    if (!target) return false;
    record.route = target.routed.route;
    record.rule = target.routed.rule;
    const origin = requestOrigin(scheme, record.host, req.headers);
    const fail = (reason: string) => {
      record.error = reason;
    };
    let answer: LocalResponse;
    if (origin === undefined) answer = { status: 400, body: 'the request has no valid Host' };
    else
      answer = await this.answer(target.action, target.routed.endpoint, req, record, origin, target.resourcePath, fail);
    sendLocalResponse(res, answer);
    return true;
  }

  private answer(
    action: Action,
    endpoint: McpOAuthEndpoint,
    req: IncomingMessage,
    record: RequestRecord,
    origin: string,
    resourcePath: string,
    fail: (reason: string) => void,
  ): LocalResponse | Promise<LocalResponse> {
    const method = req.method ?? 'GET';
    switch (action) {
      case 'protected-resource':
        if (method === 'OPTIONS') return preflight(req, 'GET, HEAD, OPTIONS');
        if (method !== 'GET' && method !== 'HEAD') return methodNotAllowed('GET, HEAD, OPTIONS');
        return endpoint.protectedResource(origin, resourcePath);
      case 'authorization-server':
        if (method === 'OPTIONS') return preflight(req, 'GET, HEAD, OPTIONS');
        if (method !== 'GET' && method !== 'HEAD') return methodNotAllowed('GET, HEAD, OPTIONS');
        return endpoint.authorizationServer(origin, resourcePath, fail);
      case 'register':
        if (method === 'OPTIONS') return preflight(req, 'POST, OPTIONS');
        if (method !== 'POST') return methodNotAllowed('POST, OPTIONS');
        return endpoint.register(req, fail);
      case 'token':
        if (method === 'OPTIONS') return preflight(req, 'POST, OPTIONS');
        if (method !== 'POST') return methodNotAllowed('POST, OPTIONS');
        return endpoint.token(req, fail);
      case 'authorize':
        if (method !== 'GET') return methodNotAllowed('GET');
        return endpoint.authorize(record.query);
    }
  }

  /** The endpoint and what it is asked for, or undefined when no MCP URL claims the path. */
  private target(
    document: 'protected-resource' | 'authorization-server',
    rest: string,
    req: IncomingMessage,
    host: string,
  ): { routed: RoutedEndpoint; action: Action; resourcePath: string } | undefined {
    if (document === 'protected-resource') {
      const routed = this.find(rest, req, host);
      return routed && { routed, action: 'protected-resource', resourcePath: rest };
    }
    // Endpoints beneath the metadata URL: only where that MCP URL's endpoint serves them.
    for (const [suffix, action] of [
      [REGISTRATION_SUFFIX, 'register'],
      [TOKEN_SUFFIX, 'token'],
      [AUTHORIZE_SUFFIX, 'authorize'],
    ] as const) {
      if (!rest.endsWith(suffix)) continue;
      const resourcePath = rest.slice(0, -suffix.length);
      const routed = this.find(resourcePath, req, host);
      if (!routed) continue;
      const served =
        action === 'register' ||
        (action === 'token' && routed.endpoint.servesToken) ||
        (action === 'authorize' && routed.endpoint.servesAuthorize);
      if (served) return { routed, action, resourcePath };
    }
    const routed = this.find(rest, req, host);
    return routed && { routed, action: 'authorization-server', resourcePath: rest };
  }

  /** The endpoint of the MCP URL whose path is `resourcePath` on this host. */
  private find(resourcePath: string, req: IncomingMessage, host: string): RoutedEndpoint | undefined {
    const root = resourcePath === '' || resourcePath === '/';
    const match = this.table.match({
      host,
      path: root ? '/' : resourcePath,
      query: '',
      method: 'POST',
      headers: req.headers,
    });
    const routed = match ? this.byRule.get(match.rule) : undefined;
    return routed ?? this.listenerWide ?? (root ? this.only : undefined);
  }
}
