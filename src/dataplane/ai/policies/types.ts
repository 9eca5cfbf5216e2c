// Shared vocabulary of the AI request policies: what compiling reports and what applying returns.
import type { JsonObject } from '../formats/types.ts';

/** A configuration problem found when compiling, such as a CEL syntax error. */
export interface AiPolicyError {
  /** Where in the configuration: `ai.transformations[2].expression`, `policies.finalTransformations[0].expression`. */
  path: string;
  message: string;
}

/** Something a policy could not do for one request (the request still goes ahead). */
export interface AiPolicyWarning {
  /** The configuration entry that failed, such as `ai.transformations[1].expression`. */
  path: string;
  /** The body field it was meant to set; it has been removed from the body. */
  field: string;
  message: string;
}

/** The request cannot be enriched as configured: answer with this status in the client's format. */
export interface AiRequestRejection {
  status: 400;
  message: string;
}

export interface AiRequestResult {
  /** The body to send on (the input body when nothing applied or the request was rejected). */
  body: JsonObject;
  /** Present only when something failed without stopping the request. */
  warnings?: AiPolicyWarning[];
  /** Present when the request must be refused. */
  rejected?: AiRequestRejection;
}

export interface AiFinalResult {
  body: JsonObject;
  warnings?: AiPolicyWarning[];
}
