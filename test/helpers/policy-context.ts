// The compile context a traffic policy gets from the data plane, for tests that compile a policy
// directly: section traffic, namespace default, no Secrets or backends unless given.
import { PolicyRuntime } from '../../src/dataplane/policies/runtime.ts';
import type { PolicyCompileContext } from '../../src/dataplane/policies/types.ts';

/** The scope of rule 0 of HTTPRoute default/web on Gateway default/ai, listener http. */
export const TEST_SCOPE = 'Gateway default/ai listener http route default/web rule 0';

/** A context with a fresh PolicyRuntime (close it when the test keeps state in it); `overrides` win. */
export function compileContext(overrides: Partial<PolicyCompileContext> = {}): PolicyCompileContext {
  return {
    path: 'traffic',
    namespace: 'default',
    data: () => undefined,
    backends: {},
    scope: TEST_SCOPE,
    runtime: new PolicyRuntime(),
    ...overrides,
  };
}
