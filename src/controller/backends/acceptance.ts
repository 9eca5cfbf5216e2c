// Whether a GwBackend is accepted, and why not: the one place that decides it. The GwBackend's
// Accepted condition reports it (status.ts), and a route's backendRef to a GwBackend that is not
// accepted does not resolve (gateway-api/backend-refs.ts: the route's ResolvedRefs is False and
// the reference's share of requests is answered 500). Only the backend's own spec decides here —
// rules the controller checks at translation time, and fields the data plane refuses belong in
// ACCEPTANCE_RULES; a missing object it names is ResolvedRefs, not Accepted.
import type { GwBackendSpec } from '../../api/kinds/gw-backend.ts';
import type { KubeObject } from '../../api/validate/admission.ts';
import { parseAddressRange } from '../../util/address-range.ts';
import { backendRefusals, refusalText } from '../refusals.ts';
import { reservedClaimProblems } from './reserved-claims.ts';

export type BackendAcceptance = { accepted: true } | { accepted: false; reason: string; message: string };

interface AcceptanceProblem {
  /** The Accepted condition's reason. */
  reason: string;
  /** The field path, what is wrong, and the fix. */
  message: string;
}

/** Each rule gives the problems of one backend spec (empty: the rule holds). */
const ACCEPTANCE_RULES: readonly ((spec: GwBackendSpec) => AcceptanceProblem[])[] = [
  (spec) => reservedClaimProblems(spec, 'spec').map((message) => ({ reason: 'Invalid', message })),
  (spec) => forwardProxyRangeProblems(spec).map((message) => ({ reason: 'Invalid', message })),
  // Fields the data plane refuses (contract/enforcement): its kind, providers and policies.
  (spec) => backendRefusals(spec).map((refusal) => ({ reason: 'Unsupported', message: refusalText(refusal) })),
];

/** Address ranges of a dynamicForwardProxy that admission's pattern lets through but do not parse (an IPv6 range). */
function forwardProxyRangeProblems(spec: GwBackendSpec): string[] {
  const proxy = spec.dynamicForwardProxy;
  if (proxy === undefined) return [];
  return (['allowedAddresses', 'deniedAddresses'] as const).flatMap((field) =>
    (proxy[field] ?? []).flatMap((text, index) => {
      const range = parseAddressRange(text);
      return typeof range === 'string'
        ? [`spec.dynamicForwardProxy.${field}[${index}]: ${range}; correct or remove the entry`]
        : [];
    }),
  );
}

const ACCEPTED: BackendAcceptance = { accepted: true };

/** Judged once per object: the objects of a snapshot are never changed, only replaced. */
const judged = new WeakMap<KubeObject, BackendAcceptance>();

export function backendAcceptance(backend: KubeObject): BackendAcceptance {
  let acceptance = judged.get(backend);
  if (acceptance === undefined) {
    const problems = ACCEPTANCE_RULES.flatMap((rule) => rule(backend.spec as GwBackendSpec));
    acceptance =
      problems.length === 0
        ? ACCEPTED
        : { accepted: false, reason: problems[0]!.reason, message: problems.map((p) => p.message).join('; ') };
    judged.set(backend, acceptance);
  }
  return acceptance;
}
