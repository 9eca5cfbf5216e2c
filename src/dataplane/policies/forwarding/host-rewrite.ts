// Host/authority rewrite toward the backend (traffic.hostRewrite).
import type { HostnameRewrite } from '../../../api/types/traffic.ts';
import { notEnforced, type PolicyCompiler } from '../types.ts';

export const compileHostRewrite: PolicyCompiler<HostnameRewrite> = (_value, context) =>
  notEnforced(context, 'hostRewrite');
