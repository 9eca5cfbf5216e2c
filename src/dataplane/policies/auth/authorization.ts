// CEL authorization rules (traffic.authorization).
import type { Authorization } from '../../../api/types/inbound-auth.ts';
import { notEnforced, type PolicyCompiler } from '../types.ts';

export const compileAuthorization: PolicyCompiler<Authorization> = (_value, context) =>
  notEnforced(context, 'authorization');
