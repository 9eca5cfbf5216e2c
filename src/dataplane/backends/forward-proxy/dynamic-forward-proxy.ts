// The dynamicForwardProxy backend kind: each request goes to the host:port its Host header names
// (the scheme's default port when it names none), a CONNECT (Frontend.connect Route) to its
// authority. The name is resolved once per request, every address checked against the
// destination rules (./destination-rules.ts, decision 0044), and the connection made to the
// first permitted address itself — never to the name again, so a DNS answer that changes between
// the check and the connection (rebinding) cannot take it elsewhere. TLS to the destination (backend
// policy tls) is for the name the client sent. Backend policies (tcp, tls, http, tunnel, auth)
// apply as for a static backend; forwarding is the http kind's (../http.ts).
//
// The address rules cannot know every address that leads back to this gateway (its Service's
// ClusterIP, a load balancer, a DNS name of either): forwarded requests carry a Via entry naming
// this Gateway by a pseudonym, and a request that comes back with it is a loop, answered 508.
import { hash } from 'node:crypto';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { fieldNamespace } from '../../../contract/dataplane-config.ts';
import { AuthConfigError, type CompiledBackendAuth, compileBackendAuth } from '../../auth/backend/index.ts';
import { sendText } from '../../proxy/direct-response.ts';
import { sendOwnFailure } from '../../proxy/own-failure.ts';
import type { AddressLookup } from '../../upstream/address-lookup.ts';
import type { UpstreamClient } from '../../upstream/client.ts';
import {
  type ConnectionSettings,
  ConnectionSettingsError,
  connectionSettings,
} from '../../upstream/connection-settings.ts';
import type { Destination } from '../../upstream/destination.ts';
import { UpstreamPools } from '../../upstream/pools.ts';
import { openTunnel } from '../../upstream/tunnel.ts';
import { backendAuthOptions } from '../auth-options.ts';
import {
  type Backend,
  type BackendKind,
  type BackendRefInput,
  type BackendRefusal,
  backendRefusal,
  type ConnectAuthority,
  type RoutedRequest,
} from '../backend.ts';
import { destinationForwarder } from '../http.ts';
import { DestinationRefused } from './destination-refused.ts';
import { DestinationRules, DestinationRulesError, type RefusalRule } from './destination-rules.ts';

/** Destinations whose connections (pool, compiled auth) are kept at once; the least recently used go first. */
const MAX_DESTINATIONS = 64;

/** Each compile gets its own destinations; the previous configuration's are closed when it is replaced. */
let compiles = 0;

export const dynamicForwardProxy: BackendKind<BackendRefInput> = {
  compile(input: BackendRefInput): Backend | BackendRefusal {
    const { object, ref, context, namespace } = input;
    if (object.kind !== 'GwBackend' || object.spec.dynamicForwardProxy === undefined)
      return backendRefusal(`backend ${input.key}: not a dynamicForwardProxy GwBackend`);
    let rules: DestinationRules;
    try {
      rules = new DestinationRules(object.spec.dynamicForwardProxy, (port) => context.servesPort(port));
    } catch (error) {
      if (error instanceof DestinationRulesError)
        return backendRefusal(`backend ${input.key}: spec.dynamicForwardProxy.${error.field}: ${error.message}`);
      throw error;
    }
    const policy = ref.policy;
    const namespaces = ref.policyNamespaces;
    const tlsNamespace = fieldNamespace(namespaces, 'tls', namespace);
    const scope = { backends: context.backends, namespace: fieldNamespace(namespaces, 'tunnel', namespace) };
    const authNamespace = fieldNamespace(namespaces, 'auth', namespace);
    const settingsFor = (destination: Destination): ConnectionSettings =>
      connectionSettings(destination, policy, context.data, tlsNamespace, scope);
    const authFor = (host: string): CompiledBackendAuth | AuthConfigError | undefined =>
      policy.auth === undefined
        ? undefined
        : compileBackendAuth(
            policy.auth,
            context.data,
            authNamespace,
            backendAuthOptions(context, authNamespace, { host }),
          );
    // What the policy gets wrong is wrong for every destination: refuse it now, naming the field.
    const probe = 'destination.invalid';
    try {
      settingsFor({ protocol: policy.tls ? 'https:' : 'http:', host: probe, port: 443, serverName: probe });
    } catch (error) {
      if (error instanceof ConnectionSettingsError)
        return backendRefusal(`backend ${input.key}: backend policy ${error.field}: ${error.message}`);
      throw error;
    }
    const auth = authFor(probe);
    if (auth instanceof AuthConfigError)
      return backendRefusal(`backend ${input.key}: backend policy auth.${auth.field}: ${auth.message}`);
    const destinations = context.runtime.use(
      `dynamic-forward-proxy ${input.key} #${++compiles}`,
      () => new Destinations(),
    );
    return new DynamicForwardProxy(
      viaPseudonym(context.gateway),
      rules,
      context.resolveHost,
      destinations,
      policy.tls !== undefined,
      settingsFor,
      authFor,
    );
  },
};

/** Where one request goes: the name the client sent, the port, and the address checked for it. */
interface Target {
  readonly host: string;
  readonly port: number;
  readonly address: string;
}

/** The forwarders of the destinations in use, with their pools; bounded, least recently used out. */
class Destinations {
  readonly #pools = new UpstreamPools();
  readonly #forwarders = new Map<string, { settings: ConnectionSettings; forwarder: Backend }>();

  /** The forwarder of a destination, created on first use; what `create` fails with is returned, not kept. */
  forwarder<E>(key: string, create: () => { settings: ConnectionSettings; forwarder: Backend } | E): Backend | E {
    let entry = this.#forwarders.get(key);
    if (entry) this.#forwarders.delete(key);
    else {
      const created = create();
      if (!(typeof created === 'object' && created !== null && 'forwarder' in created)) return created;
      entry = created;
    }
    this.#forwarders.set(key, entry);
    if (this.#forwarders.size > MAX_DESTINATIONS) {
      this.#forwarders.delete(this.#forwarders.keys().next().value!);
      this.#pools.retainOnly(new Set([...this.#forwarders.values()].map(({ settings }) => settings.key)));
    }
    return entry.forwarder;
  }

  pool(settings: ConnectionSettings) {
    return this.#pools.get(settings);
  }

  /** gw's own HTTP/1.1 client for an HTTP/1.1 destination (requests whose body is in memory: decision 0051). */
  client(settings: ConnectionSettings): UpstreamClient | undefined {
    return settings.http1 !== undefined ? this.#pools.client(settings) : undefined;
  }

  async close(): Promise<void> {
    this.#forwarders.clear();
    this.#pools.retainOnly(new Set());
  }
}

/**
 * The Via received-by of a Gateway's forward proxies: the same for every replica of the Gateway (a
 * loop through another replica is caught too), and not its name, which destinations anywhere see.
 */
function viaPseudonym(gateway: string): string {
  return `gw-${hash('sha256', `gw dynamic forward proxy ${gateway}`, 'hex').slice(0, 16)}`;
}

/** Whether a Via header (RFC 9110, section 7.6.3) lists `pseudonym` as a proxy the request went through. */
function viaLists(via: string | string[] | number | undefined, pseudonym: string): boolean {
  if (via === undefined) return false;
  const text = Array.isArray(via) ? via.join(',') : String(via);
  if (!text.includes(pseudonym)) return false;
  return text.split(',').some((entry) => entry.trim().split(/[ \t]+/)[1] === pseudonym);
}

class DynamicForwardProxy implements Backend {
  readonly type = 'dynamic' as const;
  /** This Gateway's Via entry on what it forwards ("1.1 gw-…"). */
  readonly #via: string;
  readonly #pseudonym: string;
  readonly #rules: DestinationRules;
  readonly #lookup: AddressLookup;
  readonly #destinations: Destinations;
  readonly #tls: boolean;
  readonly #settingsFor: (destination: Destination) => ConnectionSettings;
  readonly #authFor: (host: string) => CompiledBackendAuth | AuthConfigError | undefined;

  constructor(
    pseudonym: string,
    rules: DestinationRules,
    lookup: AddressLookup,
    destinations: Destinations,
    tls: boolean,
    settingsFor: (destination: Destination) => ConnectionSettings,
    authFor: (host: string) => CompiledBackendAuth | AuthConfigError | undefined,
  ) {
    this.#pseudonym = pseudonym;
    this.#via = `1.1 ${pseudonym}`;
    this.#rules = rules;
    this.#lookup = lookup;
    this.#destinations = destinations;
    this.#tls = tls;
    this.#settingsFor = settingsFor;
    this.#authFor = authFor;
  }

  readonly tunnel = async (authority: ConnectAuthority): Promise<Duplex> => {
    const target = await this.#target(authority.host, authority.port);
    return openTunnel(this.#settingsFor(this.#destination(target)));
  };

  async serve(routed: RoutedRequest): Promise<void> {
    const { req, res, record, forward } = routed;
    if (viaLists(req.headers.via, this.#pseudonym)) {
      record.error = 'dynamic forward proxy: the request came back through this Gateway (its own Via entry)';
      return void sendText(
        res,
        508,
        'the request came back to this gateway through its own forward proxy: its destination leads to the gateway itself',
      );
    }
    let target: Target;
    try {
      const named = parseHost(
        headerValue(forward.headers.host) ?? req.headers.host ?? headerValue(req.headers[':authority']),
      );
      if (named === undefined)
        throw new DestinationRefused(400, 'the request names no host to forward to', 'no usable Host header');
      target = await this.#target(named.host, named.port ?? (routed.scheme === 'https' ? 443 : 80));
    } catch (error) {
      if (!(error instanceof DestinationRefused)) throw error;
      record.error = error.logText;
      return void sendText(res, error.status, error.message);
    }
    record.upstreamHost = `${target.address.includes(':') ? `[${target.address}]` : target.address}:${target.port}`;
    const key = `${target.host} ${target.address} ${target.port}`;
    const forwarder = this.#destinations.forwarder(key, () => {
      const settings = this.#settingsFor(this.#destination(target));
      const auth = this.#authFor(target.host);
      if (auth instanceof AuthConfigError) return auth;
      return {
        settings,
        forwarder: destinationForwarder(
          'dynamic',
          settings,
          this.#destinations.pool(settings),
          this.#destinations.client(settings),
          auth,
        ),
      };
    });
    // Backend auth that cannot be made for this host (not cached: nothing is forwarded without it).
    if (forwarder instanceof AuthConfigError)
      return sendOwnFailure(res, record, `backend policy auth.${forwarder.field}: ${forwarder.message}`);
    const via = forward.headers.via;
    const earlier = Array.isArray(via) ? via.join(', ') : via === undefined ? '' : String(via);
    forward.headers.via = earlier === '' ? this.#via : `${earlier}, ${this.#via}`;
    return forwarder.serve(routed);
  }

  #destination(target: Target): Destination {
    return {
      protocol: this.#tls ? 'https:' : 'http:',
      host: target.address,
      port: target.port,
      serverName: target.host,
    };
  }

  /** Resolves `host` and picks the first address the rules permit; throws DestinationRefused. */
  async #target(host: string, port: number): Promise<Target> {
    const shown = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    let addresses: readonly string[];
    if (isIP(host) !== 0) addresses = [host];
    else {
      try {
        addresses = await withDeadline(this.#lookup(host), LOOKUP_TIMEOUT_MS);
      } catch (error) {
        throw new DestinationRefused(
          503,
          `${shown} could not be resolved`,
          `dynamic forward proxy: resolving ${host}: ${(error as Error).message}`,
        );
      }
    }
    let first: RefusalRule | undefined;
    for (const address of addresses) {
      const refusal = this.#rules.refusal(host, address, port);
      if (refusal === undefined) return { host, port, address };
      first ??= refusal;
    }
    if (first === undefined)
      throw new DestinationRefused(
        503,
        `${shown} could not be resolved`,
        `dynamic forward proxy: ${host} has no addresses`,
      );
    throw new DestinationRefused(
      403,
      `destination ${shown} refused: ${REASONS[first]}`,
      `dynamic forward proxy: ${shown} refused (${first}): resolved to ${addresses.join(', ')}`,
    );
  }
}

/** What the client reads about each rule (the host it sent, never an address gw resolved). */
const REASONS: Record<RefusalRule, string> = {
  loopback: 'it is a loopback address (allow it with dynamicForwardProxy.allowedAddresses or allowedHosts)',
  'link-local': 'it is a link-local address (allow it with dynamicForwardProxy.allowedAddresses or allowedHosts)',
  unspecified: 'it is an unspecified address (allow it with dynamicForwardProxy.allowedAddresses or allowedHosts)',
  'cloud metadata':
    'it is a cloud metadata service (allow it only with its own address in dynamicForwardProxy.allowedAddresses)',
  'gateway listener': "it is one of the gateway's own listeners",
  deniedAddresses: 'its address is in dynamicForwardProxy.deniedAddresses',
};

/** A name that does not resolve in this long is answered as unresolvable. */
const LOOKUP_TIMEOUT_MS = 5_000;

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

function headerValue(value: string | string[] | number | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value === undefined ? undefined : String(value);
}

/** host[:port] of a Host header (an IPv6 address in brackets), or undefined when it is not one. */
function parseHost(value: string | undefined): { host: string; port: number | undefined } | undefined {
  if (value === undefined) return undefined;
  const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::([0-9]{1,5}))?$/.exec(value.trim());
  if (!match) return undefined;
  const port = match[2] === undefined ? undefined : Number(match[2]);
  if (port !== undefined && (port < 1 || port > 65535)) return undefined;
  const host = match[1]!.startsWith('[') ? match[1]!.slice(1, -1) : match[1]!;
  if (match[1]!.startsWith('[') && isIP(host) !== 6) return undefined;
  return { host: host.replace(/\.$/, ''), port };
}
