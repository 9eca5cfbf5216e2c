// HTTP basic authentication (traffic.basicAuthentication).
import type { BasicAuthentication } from '../../../api/types/inbound-auth.ts';
import { notEnforced, type PolicyCompiler } from '../types.ts';

export const compileBasicAuthentication: PolicyCompiler<BasicAuthentication> = (_value, context) =>
  notEnforced(context, 'basicAuthentication');
