// Prometheus metrics of the controller alone (`gw controller`): how often and how long it
// reconciles, the statuses it writes, the data-plane objects it provisions, the Gateways it
// configures and the problems its store reports. The data plane's metrics (dataplane/telemetry) are a different registry.
import type { ReconcileReport } from './controller.ts';

export class ControllerMetrics {
  private reconciles = 0;
  private reconcileSeconds = 0;
  private lastReconcileSeconds = 0;
  private statusesWritten = 0;
  private gateways = 0;
  private provisioningWrites = 0;

  observe(report: ReconcileReport): void {
    this.reconciles++;
    this.reconcileSeconds += report.durationMs / 1000;
    this.lastReconcileSeconds = report.durationMs / 1000;
    this.statusesWritten += report.statusesWritten;
    this.gateways = report.configs.size;
    const { applied = 0, created = 0, deleted = 0 } = report.provisioned ?? {};
    this.provisioningWrites += applied + created + deleted;
  }

  /** The exposition text; `storeProblems` and `synced` are read from the store at scrape time. */
  render(storeProblems: number, synced: boolean): string {
    const lines: string[] = [];
    const metric = (name: string, type: 'counter' | 'gauge', help: string, value: number) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name} ${value}`);
    };
    metric('gw_controller_reconciles_total', 'counter', 'Full translations of every object.', this.reconciles);
    metric(
      'gw_controller_reconcile_seconds_total',
      'counter',
      'Time spent in full translations.',
      this.reconcileSeconds,
    );
    metric(
      'gw_controller_last_reconcile_seconds',
      'gauge',
      'Duration of the last full translation.',
      this.lastReconcileSeconds,
    );
    metric('gw_controller_status_writes_total', 'counter', 'Status writes sent to the store.', this.statusesWritten);
    metric(
      'gw_controller_provisioning_writes_total',
      'counter',
      "Writes of the Gateways' data-plane objects (applies, creates, deletes) the full passes started.",
      this.provisioningWrites,
    );
    metric('gw_controller_gateways', 'gauge', 'Gateways of gw with a configuration.', this.gateways);
    metric('gw_controller_store_problems', 'gauge', 'Kinds the store cannot list or watch now.', storeProblems);
    metric('gw_controller_store_synced', 'gauge', '1 once every kind has been listed.', synced ? 1 : 0);
    return `${lines.join('\n')}\n`;
  }
}
