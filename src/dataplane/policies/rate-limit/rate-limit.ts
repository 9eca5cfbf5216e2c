// Local and global rate limits (traffic.rateLimit).
import type { RateLimitsOrConditional } from '../../../api/types/traffic.ts';
import { notEnforced, type PolicyCompiler } from '../types.ts';

export const compileRateLimit: PolicyCompiler<RateLimitsOrConditional> = (_value, context) =>
  notEnforced(context, 'rateLimit');
