// BackendAI.modelAliases: a client's model name replaced by the provider's. Keys are exact names
// or patterns where `*` stands for any run of characters ("gpt-4*", "*-latest"). An exact key
// wins; otherwise the longest matching pattern (declared order between equally long ones). The
// replacement is the value as written (no capture substitution).

/** The real model for a client's model name, or undefined when no alias applies. */
export type ModelAliasResolver = (model: string) => string | undefined;

export function compileModelAliases(aliases: Record<string, string> | undefined): ModelAliasResolver | undefined {
  const entries = Object.entries(aliases ?? {});
  if (entries.length === 0) return undefined;
  const exact = new Map<string, string>();
  const patterns: { regex: RegExp; length: number; target: string }[] = [];
  for (const [alias, target] of entries) {
    if (!alias.includes('*')) {
      exact.set(alias, target);
      continue;
    }
    const source = alias
      .split('*')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*');
    patterns.push({ regex: new RegExp(`^${source}$`, 's'), length: alias.length, target });
  }
  patterns.sort((a, b) => b.length - a.length); // stable: declared order between equals
  return (model) => {
    const target = exact.get(model);
    if (target !== undefined) return target;
    for (const pattern of patterns) if (pattern.regex.test(model)) return pattern.target;
    return undefined;
  };
}
