// External authorization (traffic.extAuth).
import type { ExtAuthOrConditional } from '../../../api/types/inbound-auth.ts';
import { notEnforced, type PolicyCompiler } from '../types.ts';

export const compileExtAuth: PolicyCompiler<ExtAuthOrConditional> = (_value, context) =>
  notEnforced(context, 'extAuth');
