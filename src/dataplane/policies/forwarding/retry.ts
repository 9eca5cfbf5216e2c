// Retries of failed upstream attempts (traffic.retry).
import type { Retry } from '../../../api/types/traffic.ts';
import { notEnforced, type PolicyCompiler } from '../types.ts';

export const compileRetry: PolicyCompiler<Retry> = (_value, context) => notEnforced(context, 'retry');
