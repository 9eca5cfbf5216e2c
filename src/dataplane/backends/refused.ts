// What stands in for a backend that cannot be served as configured: every request routed to it is
// answered with the status (fail closed) and nothing reaches an upstream; the reason goes to the
// logs and the status, the client gets a request id (proxy/own-failure.ts).
import { sendOwnFailure } from '../proxy/own-failure.ts';
import type { BackendType } from '../telemetry/request-record.ts';
import type { Backend, RoutedRequest } from './backend.ts';

export class RefusedBackend implements Backend {
  readonly type: BackendType;
  readonly status: number;
  readonly message: string;

  constructor(type: BackendType, status: number, message: string) {
    this.type = type;
    this.status = status;
    this.message = message;
  }

  async serve(routed: RoutedRequest): Promise<void> {
    sendOwnFailure(routed.res, routed.record, this.message, this.status);
  }
}
