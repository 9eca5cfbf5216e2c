// The host a request is routed by: the Host header (or :authority) without its port, in lower
// case and without a trailing dot. Gateway API requires the port to be ignored when matching.

/** The host part of a Host header value; IPv6 literals keep their brackets. */
export function hostWithoutPort(host: string): string {
  if (host.charCodeAt(0) === 91 /* [ */) {
    const end = host.indexOf(']');
    return end === -1 ? host : host.slice(0, end + 1);
  }
  const colon = host.indexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}

/** The routing form of a Host header value: port removed, lower case, no trailing dot. */
export function routingHost(host: string): string {
  // Cheap for the usual already lower-case host: V8 does not copy it.
  let name = hostWithoutPort(host).toLowerCase();
  if (name.charCodeAt(name.length - 1) === 46 /* . */) name = name.slice(0, -1);
  return name;
}
