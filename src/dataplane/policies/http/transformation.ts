// CEL header and body transformations (traffic.transformation).
import type { TransformationOrConditional } from '../../../api/types/traffic.ts';
import { notEnforced, type PolicyCompiler } from '../types.ts';

export const compileTransformation: PolicyCompiler<TransformationOrConditional> = (_value, context) =>
  notEnforced(context, 'transformation');
