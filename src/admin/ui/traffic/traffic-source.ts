// Where the admin listener's traffic hub gets completed requests from: the data plane of this
// process (LocalTrafficSource), or the workers of gw run --workers (ClusterGateway implements
// the same interface over IPC). Either captures only while the hub says someone watches.
import type { RecordedVariables } from '../../../dataplane/telemetry/recorded-cel.ts';
import { recordedVariables } from '../../../dataplane/telemetry/recorded-cel.ts';
import { parseTrafficEntryId } from '../../../dataplane/telemetry/traffic-entry.ts';
import { type TrafficDelivery, TrafficForwarder } from '../../../dataplane/telemetry/traffic-forwarder.ts';
import type { TrafficTap } from '../../../dataplane/telemetry/traffic-tap.ts';

export interface TrafficSource {
  /** Starts capturing (entries go to `deliver`) or stops. */
  setWatching(on: boolean, deliver: TrafficDelivery): void;
  /** The CEL variables of a recorded request, while the process that served it still holds it. */
  recordedVariables(id: string): Promise<RecordedVariables | undefined>;
}

/** The traffic of the data plane in this process. */
export class LocalTrafficSource implements TrafficSource {
  readonly #tap: TrafficTap;
  #forwarder: TrafficForwarder | undefined;
  #deliver: TrafficDelivery | undefined;

  constructor(tap: TrafficTap) {
    this.#tap = tap;
  }

  setWatching(on: boolean, deliver: TrafficDelivery): void {
    this.#deliver = deliver;
    this.#forwarder ??= new TrafficForwarder(this.#tap, (entries, skipped) => this.#deliver?.(entries, skipped));
    this.#forwarder.setWatching(on);
  }

  async recordedVariables(id: string): Promise<RecordedVariables | undefined> {
    const parsed = parseTrafficEntryId(id);
    if (!parsed || parsed.pid !== process.pid) return undefined;
    const record = this.#tap.record(parsed.seq);
    return record && recordedVariables(record);
  }
}
