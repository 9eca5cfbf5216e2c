// Table responses (meta.k8s.io/v1 Table), what `kubectl get` asks for with
// `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`: a Name column, then the kind's printer
// columns — the CRDs' additionalPrinterColumns of the gw.dev and Gateway API kinds (src/api/kinds;
// the Gateway API kinds' are the upstream CRDs'), and kube-apiserver's columns for the core kinds — with
// dates shown as ages, as kube-apiserver renders them.
import type { PrinterColumn } from '../api/kinds/kind.ts';
import type { KubeObject } from '../api/validate/admission.ts';
import { isPlainObject } from '../util/values.ts';
import { compileJsonPath } from './json-path.ts';
import type { ApiResource } from './resources.ts';

export interface TableColumn {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

interface Column extends TableColumn {
  cell: (object: KubeObject, now: number) => unknown;
}

export type IncludeObject = 'None' | 'Object' | 'Metadata';

const NAME_COLUMN: Column = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'The name of the object, unique within its namespace (or the cluster, for cluster-scoped kinds).',
  priority: 0,
  cell: (object) => object.metadata.name ?? '',
};

const AGE: PrinterColumn = {
  name: 'Age',
  type: 'date',
  jsonPath: '.metadata.creationTimestamp',
  description: 'The time since the object was created.',
};

/** Kubernetes' duration.HumanDuration: "42s", "5m3s", "3h10m", "2d5h", "3y20d". */
export function humanDuration(milliseconds: number): string {
  const seconds = Math.floor(milliseconds / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8)
    return hours % 24 === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 365 * 8)
    return days % 365 === 0 ? `${Math.floor(days / 365)}y` : `${Math.floor(days / 365)}y${days % 365}d`;
  return `${Math.floor(days / 365)}y`;
}

function age(timestamp: unknown, now: number): unknown {
  if (typeof timestamp !== 'string') return '<unknown>';
  const time = Date.parse(timestamp);
  return Number.isNaN(time) ? '<invalid>' : humanDuration(now - time);
}

/** A column from a CRD printer column: the first JSONPath match, typed as the CRD says. */
function printerColumn(column: PrinterColumn): Column {
  const path = compileJsonPath(column.jsonPath);
  return {
    name: column.name,
    type: column.type,
    format: '',
    description: column.description ?? '',
    priority: column.priority ?? 0,
    cell: (object, now) => {
      const [value] = path(object);
      if (value === undefined || value === null) return null;
      switch (column.type) {
        case 'date':
          return age(value, now);
        case 'string':
          return typeof value === 'string' ? value : JSON.stringify(value);
        case 'integer':
          return Number.isInteger(value) ? value : null;
        case 'number':
          return typeof value === 'number' ? value : null;
        case 'boolean':
          return typeof value === 'boolean' ? value : null;
      }
    },
  };
}

function column(name: string, cell: Column['cell'], priority = 0): Column {
  return { name, type: 'string', format: '', description: '', priority, cell };
}

function keyCount(...maps: unknown[]): number {
  return maps.reduce<number>((sum, map) => sum + (isPlainObject(map) ? Object.keys(map).length : 0), 0);
}

function servicePorts(spec: Record<string, unknown>): string {
  const ports = Array.isArray(spec.ports) ? spec.ports : [];
  if (ports.length === 0) return '<none>';
  return ports
    .map((port: Record<string, unknown>) => {
      const nodePort = port.nodePort ? `:${port.nodePort}` : '';
      return `${port.port}${nodePort}/${port.protocol ?? 'TCP'}`;
    })
    .join(',');
}

function serviceExternalIp(object: KubeObject): string {
  const spec = (object.spec ?? {}) as Record<string, unknown>;
  if (spec.type === 'ExternalName') return String(spec.externalName ?? '<none>');
  const ingress = ((object.status as { loadBalancer?: { ingress?: Record<string, unknown>[] } })?.loadBalancer
    ?.ingress ?? []) as Record<string, unknown>[];
  const addresses = [
    ...ingress.map((entry) => entry.ip ?? entry.hostname).filter(Boolean),
    ...(Array.isArray(spec.externalIPs) ? spec.externalIPs : []),
  ];
  if (addresses.length > 0) return addresses.join(',');
  return spec.type === 'LoadBalancer' ? '<pending>' : '<none>';
}

const ageColumn = printerColumn(AGE);

/** kube-apiserver's columns for the core kinds. */
const CORE_COLUMNS: Record<string, Column[]> = {
  Namespace: [column('Status', (object) => (object.status as { phase?: string })?.phase ?? ''), ageColumn],
  Service: [
    column('Type', (object) => String((object.spec as Record<string, unknown>)?.type ?? 'ClusterIP')),
    column('Cluster-IP', (object) => String((object.spec as Record<string, unknown>)?.clusterIP ?? '<none>')),
    column('External-IP', serviceExternalIp),
    column('Port(s)', (object) => servicePorts((object.spec ?? {}) as Record<string, unknown>)),
    ageColumn,
    column(
      'Selector',
      (object) => {
        const selector = (object.spec as { selector?: Record<string, string> })?.selector;
        if (!selector || Object.keys(selector).length === 0) return '<none>';
        return Object.entries(selector)
          .map(([key, value]) => `${key}=${value}`)
          .join(',');
      },
      1,
    ),
  ],
  Secret: [
    column('Type', (object) => String(object.type ?? 'Opaque')),
    { ...column('Data', (object) => keyCount(object.data)), type: 'integer' },
    ageColumn,
  ],
  ConfigMap: [{ ...column('Data', (object) => keyCount(object.data, object.binaryData)), type: 'integer' }, ageColumn],
};

const columnsCache = new Map<ApiResource, Column[]>();

function columnsOf(resource: ApiResource): Column[] {
  let columns = columnsCache.get(resource);
  if (!columns) {
    let own: Column[];
    if (resource.definition.builtIn) own = CORE_COLUMNS[resource.kind] ?? [ageColumn];
    else {
      const printer = resource.definition.printerColumns ?? [AGE];
      own = printer.map(printerColumn);
    }
    columns = [NAME_COLUMN, ...own];
    columnsCache.set(resource, columns);
  }
  return columns;
}

export interface TableOptions {
  includeObject: IncludeObject;
  /** Leave out the column definitions (watch events after the first). */
  noHeaders?: boolean;
  now?: number;
}

export interface TableRow {
  cells: unknown[];
  object?: unknown;
}

function rowObject(object: KubeObject, include: IncludeObject): unknown {
  if (include === 'None') return undefined;
  if (include === 'Object') return object;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object.metadata };
}

export function tableRow(resource: ApiResource, object: KubeObject, options: TableOptions): TableRow {
  const now = options.now ?? Date.now();
  const row: TableRow = { cells: columnsOf(resource).map((col) => col.cell(object, now)) };
  const included = rowObject(object, options.includeObject);
  if (included !== undefined) row.object = included;
  return row;
}

/** A Table of objects; `metadata` carries the list's resourceVersion and continue token. */
export function toTable(
  resource: ApiResource,
  objects: readonly KubeObject[],
  metadata: Record<string, unknown>,
  options: TableOptions,
): Record<string, unknown> {
  const now = options.now ?? Date.now();
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata,
    columnDefinitions: options.noHeaders
      ? []
      : columnsOf(resource).map(({ name, type, format, description, priority }) => ({
          name,
          type,
          format,
          description,
          priority,
        })),
    rows: objects.map((object) => tableRow(resource, object, { ...options, now })),
  };
}

/** Parses includeObject (default Metadata, as kube-apiserver). */
export function parseIncludeObject(value: string | null): IncludeObject {
  return value === 'None' || value === 'Object' ? value : 'Metadata';
}
