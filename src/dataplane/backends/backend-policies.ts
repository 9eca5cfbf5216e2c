// The request policies of a backend (BackendFull `extAuth` and `transformation`, spec document 2):
// what the effective backend policy of a backendRef (or of the way to GwModels) checks and changes
// on a request once routing has chosen that backend — after the route's traffic policies and
// filters, before the kind serves it. The request handler runs them for every kind at the seam
// (decision 0041), so a kind gets them without knowing of them. They are the traffic policies'
// own modules: external authorization first (as agentgateway orders backend policies), then the
// transformation, whose response phase runs on the way back before the route's (innermost first).
//
// A backend with sub-backends (an `ai` backend's providers, an `mcp` backend's targets) may give
// one its own values (a provider's policies, a GwPolicy with sectionName): those run on that
// sub-backend's calls instead (decision 0045) — placeRequestPolicies says which run where.
import { isDeepStrictEqual } from 'node:util';
import type { BackendFull } from '../../api/types/backend-policies.ts';
import type { BackendRefConfig, FieldNamespaces } from '../../contract/dataplane-config.ts';
import type { ServedKind } from '../../contract/enforcement/consumers.ts';
import { compileExtAuth } from '../policies/ext-authz/ext-authz.ts';
import { compileBackendTransformation } from '../policies/http/transformation.ts';
import type { NamedStep } from '../policies/pipeline.ts';
import { isProblem, type PolicyCompileContext, type PolicyCompiler, type PolicyProblem } from '../policies/types.ts';

export interface CompiledBackendPolicies {
  /** In order: extAuth, then transformation; each field named `backend.<field>` for errors and logs. */
  readonly steps: readonly NamedStep[];
  /** Fields that cannot be used: the backendRef answers 500 while any remain. */
  readonly problems: readonly PolicyProblem[];
}

export const NO_BACKEND_POLICIES: CompiledBackendPolicies = Object.freeze({ steps: [], problems: [] });

type RequestPolicyField = 'extAuth' | 'transformation';

/** The backend request policies, in the order they run. */
const BACKEND_REQUEST_POLICIES: readonly { field: RequestPolicyField; compile: PolicyCompiler<never> }[] = [
  { field: 'extAuth', compile: compileExtAuth as PolicyCompiler<never> },
  { field: 'transformation', compile: compileBackendTransformation as PolicyCompiler<never> },
];

/** Where a backend policy is compiled: its home namespace and where its fields came from. */
export interface BackendPolicyScope {
  /** The namespace the policy's references resolve in by default (the backend's, or the route's for GwModels). */
  readonly namespace: string;
  /** Fields set by an object of another namespace, whose references resolve there. */
  readonly namespaces: FieldNamespaces | undefined;
  /** Where the policy applies, for state kept across reloads (an extAuth decision cache). */
  readonly scope: string;
  /** The policy a field came from. */
  readonly sources: Readonly<Record<string, string>> | undefined;
}

/** Compiles the request policies an effective backend policy sets; NO_BACKEND_POLICIES when it sets none. */
export function compileBackendPolicies(
  policy: BackendFull,
  where: BackendPolicyScope,
  base: Pick<PolicyCompileContext, 'data' | 'backends' | 'runtime'>,
): CompiledBackendPolicies {
  if (policy.extAuth === undefined && policy.transformation === undefined) return NO_BACKEND_POLICIES;
  const steps: NamedStep[] = [];
  const problems: PolicyProblem[] = [];
  for (const entry of BACKEND_REQUEST_POLICIES) {
    const value = policy[entry.field];
    if (value === undefined) continue;
    const context: PolicyCompileContext = {
      ...base,
      path: 'backend',
      namespace: where.namespaces?.[entry.field] ?? where.namespace,
      scope: where.scope,
      owner: (field) => where.sources?.[field] ?? where.scope,
    };
    let compiled: ReturnType<PolicyCompiler<never>>;
    try {
      compiled = entry.compile(value as never, context);
    } catch (error) {
      compiled = { field: `backend.${entry.field}`, message: `cannot be compiled: ${(error as Error).message}` };
    }
    if (isProblem(compiled)) problems.push(compiled);
    else if (compiled.request) steps.push({ field: `backend.${entry.field}`, run: compiled.request });
  }
  return { steps, problems };
}

/** The problems of compiled backend policies as one line, or undefined when there are none. */
export function backendPolicyProblem(policies: CompiledBackendPolicies): string | undefined {
  if (policies.problems.length === 0) return undefined;
  return `backend policy ${policies.problems.map((problem) => `${problem.field}: ${problem.message}`).join('; ')}`;
}

/** Where a backendRef's request policies run: at the seam, and on each sub-backend's calls. */
export interface RequestPolicyPlacement {
  /** What runs on the request routed to the backend, before the backend serves it. */
  readonly backend: BackendFull;
  /** What runs on each sub-backend's calls, by section name: only sub-backends with something to run. */
  readonly sections: ReadonlyMap<string, BackendFull>;
}

/**
 * Which request policies of a backendRef run at the seam and which on its sub-backends' calls.
 *
 * - `ai`: the client's request is what a provider gets, so a provider's effective value replaces
 *   the backend's for its attempts. From the first field (in running order) that some provider's
 *   effective value differs from the backend's, every provider's effective value of it runs per
 *   attempt and the seam runs the fields before it only (the order stays extAuth, transformation).
 * - `mcp`: a target gets gw's own requests (the multiplexer's), not the client's: the backend's
 *   values check and change the client's request to the MCP endpoint, and the fields where a
 *   target's effective value differs from the backend's run on that target's requests.
 * - other kinds have no sub-backends.
 */
export function placeRequestPolicies(ref: BackendRefConfig, kind: ServedKind): RequestPolicyPlacement {
  const sections = Object.entries(ref.sections ?? {});
  const differs = (section: BackendFull, field: RequestPolicyField) =>
    !isDeepStrictEqual(section[field], ref.policy[field]);
  if (kind === 'ai') {
    const first = BACKEND_REQUEST_POLICIES.findIndex(({ field }) =>
      sections.some(([, section]) => differs(section, field)),
    );
    if (first === -1) return { backend: ref.policy, sections: new Map() };
    const moved = BACKEND_REQUEST_POLICIES.slice(first).map(({ field }) => field);
    const backend: BackendFull = { ...ref.policy };
    for (const field of moved) delete backend[field];
    return {
      backend,
      sections: new Map(sections.map(([name, section]) => [name, pick(section, moved)] as const)),
    };
  }
  if (kind === 'mcp') {
    const own = new Map<string, BackendFull>();
    for (const [name, section] of sections) {
      const fields = BACKEND_REQUEST_POLICIES.map(({ field }) => field).filter((field) => differs(section, field));
      if (fields.length > 0) own.set(name, pick(section, fields));
    }
    return { backend: ref.policy, sections: own };
  }
  return { backend: ref.policy, sections: new Map() };
}

function pick(policy: BackendFull, fields: readonly RequestPolicyField[]): BackendFull {
  const picked: BackendFull = {};
  for (const field of fields)
    if (policy[field] !== undefined) (picked as Record<string, unknown>)[field] = policy[field];
  return picked;
}

/** Whether a transformation has a response Transform that changes the body (the response is then read whole). */
export function transformsResponseBody(transformation: BackendFull['transformation']): boolean {
  return transformation?.response?.body !== undefined;
}
