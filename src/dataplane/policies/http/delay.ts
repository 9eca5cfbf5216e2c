// Fault injection: delays requests (traffic.delay).
import type { Delay } from '../../../api/types/traffic.ts';
import { notEnforced, type PolicyCompiler } from '../types.ts';

export const compileDelay: PolicyCompiler<Delay> = (_value, context) => notEnforced(context, 'delay');
