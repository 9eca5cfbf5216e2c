// Literal request and response header changes (traffic.headerModifiers).
import type { HeaderModifiers } from '../../../api/types/traffic.ts';
import { notEnforced, type PolicyCompiler } from '../types.ts';

export const compileHeaderModifiers: PolicyCompiler<HeaderModifiers> = (_value, context) =>
  notEnforced(context, 'headerModifiers');
