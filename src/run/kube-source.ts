// The Kubernetes side of `gw run --kubeconfig` and `gw controller`: objects read from an API
// server — a cluster's, or another gw's embedded one — through the informer-based store, and the
// same controller as everywhere else translating them. `gw controller` writes statuses and
// provisions each Gateway's data plane; proxy replicas that read the same objects leave that to it
// (docs/control-plane.md, "In a cluster").
import type { KubeConfig } from '@kubernetes/client-node';
import {
  type ConfigUpdate,
  Controller,
  type ProvisionOptions,
  type ReconcileReport,
} from '../controller/controller.ts';
import { CONTROLLER_NAME } from '../controller/gateway-api/index.ts';
import { SNAPSHOT_KINDS } from '../controller/snapshot.ts';
import { MANAGED_SELECTOR } from '../provisioning/labels.ts';
import { PROVISIONED_KIND_KEYS } from '../provisioning/provisioned-kinds.ts';
import { clientNode } from '../store/kube/client-node.ts';
import { KubeStore } from '../store/kube/kube-store.ts';
import { moduleLog } from '../util/log-line.ts';
import type { GatewaySelection } from './file-source.ts';

export interface KubeSourceSettings {
  /** A kubeconfig file; undefined: $KUBECONFIG, ~/.kube/config, or the in-cluster service account. */
  kubeconfig?: string;
  /** A context of the kubeconfig other than its current one. */
  context?: string;
  /** Write statuses (the controller does; read-only proxy replicas do not). */
  writeStatus: boolean;
}

export interface KubeSourceOptions extends GatewaySelection {
  kube: KubeSourceSettings;
  log?: (line: string) => void;
  onReconcile?: (report: ReconcileReport) => void;
  /** Provision each gw Gateway's data plane into the cluster (gw controller). */
  provision?: ProvisionOptions;
}

/** The kubeconfig as kubectl would pick it, with a clear error when it cannot be used. */
export function loadKubeConfig(settings: Pick<KubeSourceSettings, 'kubeconfig' | 'context'>): KubeConfig {
  const config = new (clientNode().KubeConfig)();
  try {
    if (settings.kubeconfig !== undefined) config.loadFromFile(settings.kubeconfig);
    else config.loadFromDefault();
  } catch (error) {
    const where = settings.kubeconfig ?? 'the default kubeconfig';
    throw new Error(`cannot read ${where}: ${(error as Error).message}`);
  }
  if (settings.context !== undefined) {
    if (!config.getContexts().some((context) => context.name === settings.context)) {
      const known = config.getContexts().map((context) => context.name);
      throw new Error(`the kubeconfig has no context "${settings.context}" (it has: ${known.join(', ') || 'none'})`);
    }
    config.setCurrentContext(settings.context);
  }
  if (!config.getCurrentCluster()) {
    throw new Error('the kubeconfig names no cluster: give --kubeconfig FILE, set KUBECONFIG, or run in a pod');
  }
  return config;
}

export class KubeSource {
  readonly store: KubeStore;
  readonly controller: Controller;
  private stopped = false;

  constructor(options: KubeSourceOptions, onConfigs: (update: ConfigUpdate) => void) {
    const read: string[] = Object.values(SNAPSHOT_KINDS);
    // Of the kinds read only for provisioning, only what gw generated is listed and watched.
    const provisioned = options.provision ? PROVISIONED_KIND_KEYS.filter((kind) => !read.includes(kind)) : [];
    this.store = new KubeStore({
      kubeConfig: loadKubeConfig(options.kube),
      kinds: [...read, ...provisioned],
      labelSelectors: Object.fromEntries(provisioned.map((kind) => [kind, MANAGED_SELECTOR])),
      writeStatus: options.kube.writeStatus,
      writeObjects: options.provision !== undefined,
      controllerName: CONTROLLER_NAME,
      log: moduleLog(options.log, 'kube'),
    });
    this.controller = new Controller(this.store, {
      onConfigs,
      onReconcile: options.onReconcile,
      servedGateway: options.servedGateway,
      onServedGateway: options.onServedGateway,
      ...(options.provision && { provision: options.provision }),
    });
  }

  /** Lists every kind (waiting for the API server as long as it takes), then translates and follows changes. */
  async start(): Promise<void> {
    await this.store.start();
    if (!this.stopped) this.controller.start();
  }

  /** Whether every kind has been listed. */
  ready(): boolean {
    return this.store.synced();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.controller.stop();
    await this.store.close();
  }
}
