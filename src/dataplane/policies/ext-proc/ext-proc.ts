// External processing (traffic.extProc).
import type { ExtProcOrConditional } from '../../../api/types/inbound-auth.ts';
import { notEnforced, type PolicyCompiler } from '../types.ts';

export const compileExtProc: PolicyCompiler<ExtProcOrConditional> = (_value, context) =>
  notEnforced(context, 'extProc');
