// Cross-origin resource sharing (traffic.cors).
import type { CORS } from '../../../api/types/traffic.ts';
import { notEnforced, type PolicyCompiler } from '../types.ts';

export const compileCors: PolicyCompiler<CORS> = (_value, context) => notEnforced(context, 'cors');
