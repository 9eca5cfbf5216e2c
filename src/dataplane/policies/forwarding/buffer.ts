// Whole-body buffering of requests and responses (traffic.buffer).
import type { Buffer } from '../../../api/types/traffic.ts';
import { notEnforced, type PolicyCompiler } from '../types.ts';

export const compileBuffer: PolicyCompiler<Buffer> = (_value, context) => notEnforced(context, 'buffer');
