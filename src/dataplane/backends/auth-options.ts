// What a backend's authentication is compiled with wherever a backend is compiled (HTTP
// backends, AI providers, MCP targets): token endpoints resolve among the configuration's
// backends, token caches live in the policy runtime (kept across configurations that keep the
// credential), and warnings reach the data plane's log.
import type { BackendAuthOptions, BackendTarget, KeyStyle } from '../auth/backend/index.ts';
import type { BackendCompileContext } from './backend.ts';

export function backendAuthOptions(
  context: Pick<BackendCompileContext, 'backends' | 'runtime' | 'report'>,
  namespace: string,
  target: BackendTarget,
  keyStyle?: KeyStyle,
): BackendAuthOptions {
  const options: BackendAuthOptions = {
    target,
    endpoints: { backends: context.backends, namespace },
    runtime: context.runtime,
    warn: (message) => context.report(message),
  };
  if (keyStyle !== undefined) options.keyStyle = keyStyle;
  return options;
}
