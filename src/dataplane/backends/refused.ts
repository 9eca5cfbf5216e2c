// What stands in for a backend that cannot be served as configured: every request routed to it is
// answered with the status (fail closed) and nothing reaches an upstream; the reason goes to the
// logs and the status, the client gets a request id (proxy/own-failure.ts).
import type { GatewayAnswers } from '../proxy/answers.ts';
import { sendOwnFailure } from '../proxy/own-failure.ts';
import type { BackendType } from '../telemetry/request-record.ts';
import type { Backend, RoutedRequest } from './backend.ts';

export class RefusedBackend implements Backend {
  readonly type: BackendType;
  readonly status: number;
  readonly message: string;
  /** An LLM backend's refusal is worded in its clients' format (BackendKind.refusedAnswers). */
  readonly answersFor?: (path: string) => GatewayAnswers;

  constructor(type: BackendType, status: number, message: string, answersFor?: (path: string) => GatewayAnswers) {
    this.type = type;
    this.status = status;
    this.message = message;
    if (answersFor) this.answersFor = answersFor;
  }

  async serve(routed: RoutedRequest): Promise<void> {
    if (this.answersFor)
      this.answersFor(routed.forward.path).ownFailure(routed.res, routed.record, this.message, this.status);
    else sendOwnFailure(routed.res, routed.record, this.message, this.status);
  }
}
