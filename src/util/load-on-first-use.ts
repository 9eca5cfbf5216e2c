// Packages gw needs only for some configurations, loaded the first time they are used instead of
// at start: a gateway that never calls a gRPC service or exports OTLP does not carry their code
// (docs/benchmarks.md, "Memory"). Node 24 loads ES modules with require() synchronously, so the
// callers stay synchronous; the package is resolved from this file, as an import would be.
import { createRequire } from 'node:module';

const requireFromGw = createRequire(import.meta.url);

/** A function that returns the package `specifier`, required on its first call. */
export function loadOnFirstUse<T>(specifier: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= requireFromGw(specifier) as T;
    return loaded;
  };
}
