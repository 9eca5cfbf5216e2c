// API key authentication (traffic.apiKeyAuthentication).
import type { APIKeyAuthentication } from '../../../api/types/inbound-auth.ts';
import { notEnforced, type PolicyCompiler } from '../types.ts';

export const compileApiKeyAuthentication: PolicyCompiler<APIKeyAuthentication> = (_value, context) =>
  notEnforced(context, 'apiKeyAuthentication');
