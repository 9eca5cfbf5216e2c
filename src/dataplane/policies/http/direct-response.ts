// Answers without calling a backend (traffic.directResponse).
import type { DirectResponseOrConditional } from '../../../api/types/traffic.ts';
import { notEnforced, type PolicyCompiler } from '../types.ts';

export const compileDirectResponse: PolicyCompiler<DirectResponseOrConditional> = (_value, context) =>
  notEnforced(context, 'directResponse');
