// What a request path names, as kube-apiserver reads it: discovery documents, /version,
// OpenAPI, health, or a resource — a collection (in a namespace or across all), one object, or
// its status subresource. The deprecated /watch/ prefix is read as watch=true.
import { type ApiResource, resourceAt } from './resources.ts';

export type Route =
  | { type: 'core-versions' }
  | { type: 'group-list' }
  | { type: 'group'; group: string }
  | { type: 'resource-list'; group: string; version: string }
  | { type: 'version' }
  | { type: 'openapi-root' }
  | { type: 'openapi-document'; path: string }
  | { type: 'health'; which: string }
  | {
      type: 'resource';
      resource: ApiResource;
      namespace: string | undefined;
      name: string | undefined;
      subresource: string | undefined;
      watchPrefix: boolean;
    }
  | { type: 'unknown' };

const HEALTH = new Set(['healthz', 'livez', 'readyz']);

function resourceRoute(group: string, version: string, segments: string[]): Route {
  let watchPrefix = false;
  if (segments[0] === 'watch') {
    watchPrefix = true;
    segments = segments.slice(1);
  }
  if (segments[0] === 'namespaces' && segments.length >= 3) {
    const namespaced = resourceAt(group, version, segments[2]!);
    if (namespaced?.namespaced) {
      const [, namespace, , name, subresource, ...rest] = segments;
      if (rest.length > 0) return { type: 'unknown' };
      return { type: 'resource', resource: namespaced, namespace, name, subresource, watchPrefix };
    }
  }
  const [plural, name, subresource, ...rest] = segments;
  const resource = plural === undefined ? undefined : resourceAt(group, version, plural);
  if (!resource || rest.length > 0) return { type: 'unknown' };
  // A namespaced kind is reachable without a namespace only as a collection (list/watch all).
  if (resource.namespaced && name !== undefined) return { type: 'unknown' };
  return { type: 'resource', resource, namespace: undefined, name, subresource, watchPrefix };
}

/** Reads a request path (without the query). */
export function routeOf(pathname: string): Route {
  const segments = pathname
    .split('/')
    .filter((segment) => segment !== '')
    .map((segment) => decodeURIComponent(segment));
  const [root, ...rest] = segments;
  if (root === 'api') {
    if (rest.length === 0) return { type: 'core-versions' };
    const [version, ...resourcePath] = rest;
    if (resourcePath.length === 0) return { type: 'resource-list', group: '', version: version! };
    return resourceRoute('', version!, resourcePath);
  }
  if (root === 'apis') {
    if (rest.length === 0) return { type: 'group-list' };
    const [group, version, ...resourcePath] = rest;
    if (version === undefined) return { type: 'group', group: group! };
    if (resourcePath.length === 0) return { type: 'resource-list', group: group!, version };
    return resourceRoute(group!, version, resourcePath);
  }
  if (root === 'version' && rest.length === 0) return { type: 'version' };
  if (root === 'openapi' && rest[0] === 'v3') {
    if (rest.length === 1) return { type: 'openapi-root' };
    return { type: 'openapi-document', path: rest.slice(1).join('/') };
  }
  if (root !== undefined && HEALTH.has(root) && rest.length <= 1) return { type: 'health', which: root };
  return { type: 'unknown' };
}
