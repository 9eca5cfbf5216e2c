// Hostname intersection between a listener and a route, as Gateway API defines it: a wildcard
// `*.example.com` stands for one or more labels before `.example.com` (never example.com itself).

/** Whether `wildcard` (a `*.` name) covers `name` (exact or wildcard). */
function covers(wildcard: string, name: string): boolean {
  const suffix = wildcard.slice(1); // ".example.com"
  if (name.startsWith('*.')) return name.slice(1).endsWith(suffix) && name.length >= wildcard.length;
  return name.endsWith(suffix) && name.length > suffix.length;
}

/** The more specific of two hostnames when they overlap, or undefined when they do not. */
export function intersectHostname(listener: string, route: string): string | undefined {
  if (listener === route) return route;
  const listenerWild = listener.startsWith('*.');
  const routeWild = route.startsWith('*.');
  if (listenerWild && covers(listener, route)) return route;
  if (routeWild && covers(route, listener)) return listener;
  return undefined;
}

/**
 * The hostnames a route serves on a listener: undefined when none overlap (the route does not
 * attach there), [] when neither side restricts hosts (any host), otherwise the overlaps in the
 * route's order without duplicates.
 */
export function effectiveHostnames(listener: string | undefined, route: readonly string[]): string[] | undefined {
  if (route.length === 0) return listener === undefined ? [] : [listener];
  if (listener === undefined) return [...new Set(route)];
  const result: string[] = [];
  for (const hostname of route) {
    const overlap = intersectHostname(listener, hostname);
    if (overlap !== undefined && !result.includes(overlap)) result.push(overlap);
  }
  return result.length > 0 ? result : undefined;
}
