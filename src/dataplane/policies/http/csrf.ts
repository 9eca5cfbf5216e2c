// Cross-site request forgery protection (traffic.csrf).
import type { CSRF } from '../../../api/types/traffic.ts';
import { notEnforced, type PolicyCompiler } from '../types.ts';

export const compileCsrf: PolicyCompiler<CSRF> = (_value, context) => notEnforced(context, 'csrf');
