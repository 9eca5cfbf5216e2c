// A destination a dynamic forward proxy does not connect to: a name that does not resolve, or
// one whose addresses its rules refuse. The client's answer names the host it sent and the rule,
// never an address gw resolved; the log (logText) has the addresses.

export class DestinationRefused extends Error {
  /** 403 for a refused destination, 400 for no usable host, 503 when the name cannot be resolved. */
  readonly status: number;
  /** For the access log and gw's log: the detail, resolved addresses included. */
  readonly logText: string;
  constructor(status: number, message: string, logText: string) {
    super(message);
    this.status = status;
    this.logText = logText;
  }
}
