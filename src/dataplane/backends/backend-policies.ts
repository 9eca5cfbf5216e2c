// The request policies of a backend (BackendFull `extAuth` and `transformation`, spec document 2):
// what the effective backend policy of a backendRef (or of the way to GwModels) checks and changes
// on a request once routing has chosen that backend — after the route's traffic policies and
// filters, before the kind serves it. The request handler runs them for every kind at the seam
// (decision 0041), so a kind gets them without knowing of them. They are the traffic policies'
// own modules: external authorization first (as agentgateway orders backend policies), then the
// transformation, whose response phase runs on the way back before the route's (innermost first).
import type { BackendFull } from '../../api/types/backend-policies.ts';
import type { FieldNamespaces } from '../../contract/dataplane-config.ts';
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

/** The backend request policies, in the order they run. */
const BACKEND_REQUEST_POLICIES: readonly { field: 'extAuth' | 'transformation'; compile: PolicyCompiler<never> }[] = [
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
