// JWT authentication (traffic.jwtAuthentication).
import type { JWTAuthentication } from '../../../api/types/inbound-auth.ts';
import { notEnforced, type PolicyCompiler } from '../types.ts';

export const compileJwtAuthentication: PolicyCompiler<JWTAuthentication> = (_value, context) =>
  notEnforced(context, 'jwtAuthentication');
