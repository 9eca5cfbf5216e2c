// MCPGuardrailsProcessor.methods: in which phase a processor sees a method. Keys are an exact
// method (`tools/call`), a prefix wildcard (`tools/*`), a suffix wildcard (`*/list`) or `*`. The
// most specific key wins, as agentgateway ranks them: the exact method, then prefix wildcards,
// then suffix wildcards (a method's namespace is its owner: `tools/*` beats `*/list` for
// tools/list), then `*`; among wildcards of one kind the longer wins. Two different wildcards of
// one kind and length cannot both match a method, so there are no ties. A method no key matches
// bypasses the processor (Off).
import type { MCPMethodPhase } from '../../../api/types/mcp.ts';

export type MethodPhase = MCPMethodPhase;

interface Wildcard {
  /** 3 prefix, 2 suffix, 1 `*`: the higher the more specific. */
  rank: number;
  /** The literal part (`tools/` of `tools/*`, `/list` of `*\/list`). */
  literal: string;
  phase: MethodPhase;
}

/** The phase of each method under a processor's `methods` map. */
export function compileMethodPhases(methods: Readonly<Record<string, MethodPhase>>): (method: string) => MethodPhase {
  const exact = new Map<string, MethodPhase>();
  const wildcards: Wildcard[] = [];
  for (const [key, phase] of Object.entries(methods)) {
    if (key === '*') wildcards.push({ rank: 1, literal: '', phase });
    else if (key.endsWith('*')) wildcards.push({ rank: 3, literal: key.slice(0, -1), phase });
    else if (key.startsWith('*')) wildcards.push({ rank: 2, literal: key.slice(1), phase });
    else exact.set(key, phase);
  }
  // Most specific first: the first wildcard that matches is the answer.
  wildcards.sort((a, b) => b.rank - a.rank || b.literal.length - a.literal.length);
  return (method) => {
    const found = exact.get(method);
    if (found !== undefined) return found;
    for (const wildcard of wildcards) {
      const matches =
        wildcard.rank === 3
          ? method.startsWith(wildcard.literal)
          : wildcard.rank === 2
            ? method.endsWith(wildcard.literal)
            : true;
      if (matches) return wildcard.phase;
    }
    return 'Off';
  };
}

export function runsRequest(phase: MethodPhase): boolean {
  return phase === 'Request' || phase === 'Full';
}

export function runsResponse(phase: MethodPhase): boolean {
  return phase === 'Response' || phase === 'Full';
}
