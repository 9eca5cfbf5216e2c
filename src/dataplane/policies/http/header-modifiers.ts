// Literal request and response header changes (traffic.headerModifiers): Gateway API's
// HTTPHeaderFilter, applied by the same code as the RequestHeaderModifier and
// ResponseHeaderModifier route filters (routing/filters.ts) — set replaces, add appends with a
// comma, remove deletes, names case-insensitive. Request changes apply to the request as it goes
// upstream; response changes to every response of the request, gw's own answers included.
import type { HeaderModifiers, HTTPHeaderFilter } from '../../../api/types/traffic.ts';
import type { ResponseHead } from '../../proxy/client-response.ts';
import { applyHeaderModifier, compileFilters, type HeaderBag, type HeaderModifier } from '../../routing/filters.ts';
import type { PolicyCompiler, RequestStep } from '../types.ts';

export const compileHeaderModifiers: PolicyCompiler<HeaderModifiers> = (value, context) => {
  const request = value.request ? headerModifier('RequestHeaderModifier', value.request) : undefined;
  const response = value.response ? headerModifier('ResponseHeaderModifier', value.response) : undefined;
  if (request instanceof Error) return { field: `${context.path}.headerModifiers.request`, message: request.message };
  if (response instanceof Error)
    return { field: `${context.path}.headerModifiers.response`, message: response.message };
  if (!request && !response) return {};
  const step: RequestStep = (exchange) => {
    if (request) applyHeaderModifier(request, exchange.forward.headers);
    if (response) exchange.onResponse((res) => modifyResponseHeaders(response, res));
    return undefined;
  };
  return { request: step };
};

/** The route filters' compiled form of an HTTPHeaderFilter (one compiler for both uses). */
function headerModifier(
  type: 'RequestHeaderModifier' | 'ResponseHeaderModifier',
  filter: HTTPHeaderFilter,
): HeaderModifier | Error {
  const key = type === 'RequestHeaderModifier' ? 'requestHeaderModifier' : 'responseHeaderModifier';
  const compiled = compileFilters([{ type, [key]: filter }], []);
  if (compiled.problems.length > 0) return new Error(compiled.problems[0]!.message);
  const modifier = type === 'RequestHeaderModifier' ? compiled.request[0] : undefined;
  if (modifier?.kind === 'headers') return modifier.modifier;
  if (compiled.response) return compiled.response;
  return new Error('the header filter did not compile');
}

/** Applies a modifier to the headers of a response about to start, touching only the names it names. */
export function modifyResponseHeaders(modifier: HeaderModifier, res: ResponseHead): void {
  const headers = res.getHeaders() as HeaderBag;
  applyHeaderModifier(modifier, headers);
  for (const [name] of [...modifier.set, ...modifier.add]) {
    const value = headers[name];
    if (value !== undefined) res.setHeader(name, value);
  }
  for (const name of modifier.remove) res.removeHeader(name);
}
