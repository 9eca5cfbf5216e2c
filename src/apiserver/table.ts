// Table responses (meta.k8s.io/v1 Table), what `kubectl get` asks for with
// `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`: a Name column, then the kind's printer
// columns — the CRDs' additionalPrinterColumns of the gw.dev and Gateway API kinds (src/api/kinds;
// the Gateway API kinds' are the upstream CRDs'), and kube-apiserver's columns for the built-in
// kinds (built-in-columns.ts) — with dates shown as ages, as kube-apiserver renders them.
import type { PrinterColumn } from '../api/kinds/kind.ts';
import type { KubeObject } from '../api/validate/admission.ts';
import { BUILT_IN_COLUMNS } from './built-in-columns.ts';
import { compileJsonPath } from './json-path.ts';
import type { ApiResource } from './resources.ts';
import { age, ageColumn, type Column, type TableColumn } from './table-cells.ts';

export { humanDuration } from './table-cells.ts';
export type { TableColumn };

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

const columnsCache = new Map<ApiResource, Column[]>();

function columnsOf(resource: ApiResource): Column[] {
  let columns = columnsCache.get(resource);
  if (!columns) {
    let own: Column[];
    if (resource.definition.builtIn) own = BUILT_IN_COLUMNS[resource.kind] ?? [ageColumn];
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
