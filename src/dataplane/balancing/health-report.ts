// What a backend reports of the live state it keeps, for operators (the web UI's Models page):
// the models a discovery request lists, each model's passive health, a virtual model's targets
// with theirs, an `ai` GwBackend's priority groups. Plain data with times relative to now (a
// monotonic clock is per process), so a worker's report travels to the primary as it is.
import type { EndpointHealth, EndpointHealthSnapshot } from './endpoint-health.ts';

export interface HealthView extends Omit<EndpointHealthSnapshot, 'evictedUntil'> {
  /** While evicted: how long until the eviction ends and the endpoint is offered again. */
  restoresInMs?: number;
}

export interface ModelHealthView {
  key: string;
  kind: 'concrete' | 'virtual' | 'error';
  /** The model name clients ask for (a pattern may have a wildcard). */
  pattern: string;
  public: boolean;
  health?: HealthView;
  routing?: 'weighted' | 'failover' | 'conditional';
  targets?: { model: string; upstreamModel?: string; weight?: number; priority?: number; health: HealthView }[];
  /** Why a model cannot be served. */
  message?: string;
}

export interface BackendHealthReport {
  /** What GET /v1/models answers here: the Public models' names. */
  discovery?: string[];
  models?: ModelHealthView[];
  /** Providers of an `ai` GwBackend by priority group (lower groups are tried first). */
  providers?: (HealthView & { name: string; group: number })[];
  /** The backend's own passive health (backend policy `health`). */
  endpoint?: HealthView;
}

export function healthView(health: EndpointHealth, now: number): HealthView {
  return relativeView(health.snapshot(), now);
}

/** A snapshot (and whatever it carries besides, a provider's name) with its eviction's end relative to `now`. */
export function relativeView<S extends EndpointHealthSnapshot>(
  snapshot: S,
  now: number,
): Omit<S, 'evictedUntil'> & HealthView {
  const { evictedUntil, ...rest } = snapshot;
  return evictedUntil === undefined ? rest : { ...rest, restoresInMs: Math.max(0, evictedUntil - now) };
}

/** One backend's report where it is used: a rule of a route (or a listener's models) of a Gateway. */
export interface PlacedHealthReport extends BackendHealthReport {
  gateway: string;
  listener: string;
  port: number;
  /** "namespace/name" of the route; '' for the listener's own models. */
  route: string;
  /** The rule's name, or its index. */
  rule: string;
  /** "GwBackend ns/name", "Service ns/name", "GwModel *". */
  backend: string;
}
