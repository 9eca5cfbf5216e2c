// The request deadline (traffic.timeouts.request): the whole request, retries included.
import type { Timeouts } from '../../../api/types/traffic.ts';
import { durationMs } from '../../../util/units.ts';
import type { PolicyCompiler } from '../types.ts';

export const compileTimeouts: PolicyCompiler<Timeouts> = (value) =>
  value.request === undefined ? {} : { forwarding: { requestTimeoutMs: durationMs(value.request) } };
