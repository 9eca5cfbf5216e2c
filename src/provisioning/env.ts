// The container environment of the data plane: gw's own variables merged with GwParameters' env
// (same name overrides in place, new names are appended), and Kubernetes' `$(VAR)` expansion as the
// kubelet applies it, so gw can tell what the proxy will see. The manifest keeps the values as
// written: the kubelet expands them when it starts the container, expanding twice would eat `$$`.
import type { EnvVar } from '../api/types/provisioning.ts';

/**
 * Variables in order, a later one of the same name replacing the earlier in its position
 * (a strategic merge of `env` by its merge key, name).
 */
export function mergeEnv(base: readonly EnvVar[], overrides: readonly EnvVar[]): EnvVar[] {
  const merged = [...base];
  for (const variable of overrides) {
    const at = merged.findIndex((existing) => existing.name === variable.name);
    if (at >= 0) merged[at] = variable;
    else merged.push(variable);
  }
  return merged;
}

/**
 * Expands one value as Kubernetes does: `$(NAME)` becomes the value of NAME when `lookup` knows it
 * and stays as written otherwise; `$$` is one literal `$`; a `$` before anything else, or an
 * unclosed `$(`, is kept literally (what follows an unclosed `$(` is still read: `$$` in it escapes).
 */
export function expandValue(value: string, lookup: (name: string) => string | undefined): string {
  let out = '';
  let i = 0;
  while (i < value.length) {
    const char = value[i];
    if (char !== '$' || i + 1 >= value.length) {
      out += char;
      i += 1;
      continue;
    }
    const next = value[i + 1];
    if (next === '$') {
      out += '$';
      i += 2;
    } else if (next === '(') {
      const close = value.indexOf(')', i + 2);
      if (close < 0) {
        // Kubernetes keeps the unclosed `$(` and reads on after it.
        out += '$(';
        i += 2;
        continue;
      }
      const name = value.slice(i + 2, close);
      const found = lookup(name);
      out += found ?? value.slice(i, close + 1);
      i = close + 1;
    } else {
      out += `$${next}`;
      i += 2;
    }
  }
  return out;
}

/** A variable as the container sees it: its expanded value, or where Kubernetes takes it from. */
export type EffectiveEnvValue = { value: string } | { from: 'valueFrom' };

/**
 * The environment the container starts with, as the kubelet builds it: in order, each literal value
 * expanded against the variables defined before it (a later one of the same name replaces the
 * earlier). A variable taken from valueFrom is known only in the pod, so a reference to it is left
 * as written here (the kubelet resolves it).
 */
export function effectiveEnv(variables: readonly EnvVar[]): Map<string, EffectiveEnvValue> {
  const seen = new Map<string, EffectiveEnvValue>();
  for (const variable of variables) {
    if (variable.valueFrom !== undefined) {
      seen.set(variable.name, { from: 'valueFrom' });
      continue;
    }
    const value = expandValue(variable.value ?? '', (name) => {
      const earlier = seen.get(name);
      return earlier !== undefined && 'value' in earlier ? earlier.value : undefined;
    });
    seen.set(variable.name, { value });
  }
  return seen;
}
