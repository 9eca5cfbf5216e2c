// The API reference (docs/reference.md), rendered from the schemas so it cannot drift from what
// the validator and the CRDs enforce: one section per named type, grouped by where its design comes
// from, and one section per kind. The output depends only on the schemas (names sorted).
import { type KindDefinition, servedApiVersionsOf } from '../kinds/kind.ts';
import { META, type SchemaNode, type TypeMeta, type ValidationRule } from '../schema/schema.ts';

const SOURCE_ORDER: readonly TypeMeta['source'][] = ['1', '2', 'gw', 'gateway-api', 'inference-extension', 'core'];

const SOURCE_TITLES: Record<TypeMeta['source'], string> = {
  '1': 'Document 1 types (top-level resources)',
  '2': 'Document 2 types (shared field types)',
  gw: 'gw-designed types (the spec says "not shown")',
  'gateway-api': 'Gateway API types',
  'inference-extension': 'Gateway API Inference Extension types',
  core: 'Kubernetes types',
};

const SOURCE_INTROS: Record<TypeMeta['source'], string> = {
  '1': 'Types defined by the spec document "Overview and Top-Level Resources".',
  '2': 'Types defined by the spec document "Shared Field Types".',
  gw: "Types the spec names without showing their fields; gw designed them (see each type's notes).",
  'gateway-api': 'The parts of Kubernetes Gateway API (gateway.networking.k8s.io) that gw reads.',
  'inference-extension':
    "The Gateway API Inference Extension's InferencePool (inference.networking.k8s.io), which a custom LLM provider's backendRef may name.",
  core: "The parts of Kubernetes' built-in objects that gw reads (core v1) or stores in its API server (the workloads, budgets, autoscalers, accounts and RBAC its provisioning writes).",
};

/** The anchor of a named type's section. */
export function typeAnchor(name: string): string {
  return `type-${name.toLowerCase()}`;
}

function kindAnchor(definition: KindDefinition): string {
  return `kind-${(definition.group || 'core').replaceAll('.', '-')}-${definition.kind.toLowerCase()}`;
}

/** Escapes text for a Markdown table cell (pipes, line breaks). */
function cell(text: string): string {
  return text.replaceAll('|', '\\|').replace(/\r?\n/g, '<br>');
}

/**
 * Free text (descriptions, notes, messages) as Markdown: literal outside code spans, so a
 * wildcard like gpt-* or a placeholder like <hex> is shown as written.
 */
function prose(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/[\\*_[\]]/g, '\\$&').replaceAll('<', '&lt;')))
    .join('');
}

/** A code span that survives backticks in its content. */
function code(text: string): string {
  const fence = text.includes('`') ? '``' : '`';
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}

function json(value: unknown): string {
  return JSON.stringify(value);
}

function metaOf(node: SchemaNode): TypeMeta | undefined {
  return node[META];
}

type Types = Map<string, SchemaNode>;

/**
 * The named type a node documents in its own section: a node carrying the TypeMeta of the
 * exported type of its name (refined copies share it). Another type that happens to reuse an
 * exported type's name has no section; it is documented inline where it is used.
 */
function linked(node: SchemaNode, types: Types): TypeMeta | undefined {
  const meta = metaOf(node);
  return meta && types.get(meta.name)?.[META] === meta ? meta : undefined;
}

function isMap(node: SchemaNode): boolean {
  return node.additionalProperties !== undefined;
}

/** The type column: a link for a named type (or a list/map of one), else the OpenAPI shape. */
function typeText(node: SchemaNode, types: Types, top = false): string {
  const meta = linked(node, types);
  if (meta && !top) return `[${meta.name}](#${typeAnchor(meta.name)})`;
  const unlinked = metaOf(node);
  if (unlinked && !top) return `${unlinked.name} (${unlinked.source}; fields below)`;
  if (node['x-kubernetes-int-or-string']) return 'integer or string';
  if (node.type === 'array') return `array of ${node.items ? typeText(node.items, types) : 'any'}`;
  if (isMap(node)) return `map of string to ${typeText(node.additionalProperties!, types)}`;
  if (node['x-kubernetes-preserve-unknown-fields']) return node.type === 'object' ? 'JSON object' : 'JSON';
  if (node.type === 'string' && node.enum) return 'string enum';
  return node.type ?? 'any';
}

function range(min: number | undefined, max: number | undefined): string | undefined {
  if (min !== undefined && max !== undefined) return min === max ? `${min}` : `${min}-${max}`;
  if (min !== undefined) return `min ${min}`;
  if (max !== undefined) return `max ${max}`;
  return undefined;
}

/** The bounds a node declares itself; with `base`, only those that differ from the named original. */
function bounds(node: SchemaNode, types: Types, base?: SchemaNode): string[] {
  const own = <K extends keyof SchemaNode>(key: K): SchemaNode[K] | undefined =>
    base && json(base[key]) === json(node[key]) ? undefined : node[key];
  const out: string[] = [];
  const len = range(own('minLength'), own('maxLength'));
  if (len) out.push(`len ${len}`);
  const items = range(own('minItems'), own('maxItems'));
  if (items) out.push(`items ${items}`);
  const entries = range(own('minProperties'), own('maxProperties'));
  if (entries) out.push(`${isMap(node) ? 'entries' : 'fields'} ${entries}`);
  const minimum = own('minimum');
  const maximum = own('maximum');
  if (minimum !== undefined && maximum !== undefined) out.push(`${minimum}-${maximum}`);
  else if (minimum !== undefined) out.push(`min ${minimum}`);
  else if (maximum !== undefined) out.push(`max ${maximum}`);
  const pattern = own('pattern');
  if (pattern !== undefined) out.push(`pattern ${code(pattern)}`);
  const values = own('enum');
  if (values) out.push(`enum: ${values.map((v) => code(String(v))).join(', ')}`);
  const format = own('format');
  if (format !== undefined) out.push(`format ${format}`);
  const listType = own('x-kubernetes-list-type');
  if (listType === 'set') out.push('unique items');
  if (listType === 'map') out.push(`unique by ${(node['x-kubernetes-list-map-keys'] ?? []).join(', ')}`);
  // An anonymous list or map of scalars: its items' bounds belong to the field.
  const inner = node.items ?? node.additionalProperties;
  if (inner && !linked(inner, types) && !inner.properties) {
    const innerBounds = bounds(inner, types);
    if (innerBounds.length > 0) out.push(`each: ${innerBounds.join(', ')}`);
  }
  return out;
}

interface FieldRow {
  path: string;
  node: SchemaNode;
  required: boolean;
}

interface RuleRow {
  /** Where the rule sits, relative to the type ('' = the type itself). */
  at: string;
  rule: ValidationRule;
}

/** The node whose fields an anonymous field contributes (an object, or the items of a list of objects). */
function inlineObject(node: SchemaNode, types: Types): { node: SchemaNode; suffix: string } | undefined {
  if (linked(node, types)) return undefined;
  if (node.properties) return { node, suffix: '' };
  const { items, additionalProperties: values } = node;
  if (node.type === 'array' && items && !linked(items, types) && items.properties) return { node: items, suffix: '[]' };
  if (values && !linked(values, types) && values.properties) return { node: values, suffix: '[*]' };
  return undefined;
}

/** Rules a node adds beyond those of the named type it refines. */
function extraRules(node: SchemaNode, base: SchemaNode): ValidationRule[] {
  const rules = node['x-kubernetes-validations'] ?? [];
  const known = new Set((base['x-kubernetes-validations'] ?? []).map((r) => json(r)));
  return rules.filter((r) => !known.has(json(r)));
}

/** Walks an object's fields, flattening anonymous nested objects into dotted paths. */
function collect(
  node: SchemaNode,
  prefix: string,
  types: Types,
  fields: FieldRow[],
  rules: RuleRow[],
  ancestors: ReadonlySet<SchemaNode> = new Set([node]),
): void {
  const required = new Set(node.required ?? []);
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    const path = `${prefix}${name}`;
    fields.push({ path, node: child, required: required.has(name) });
    const meta = linked(child, types);
    if (!meta) {
      for (const rule of child['x-kubernetes-validations'] ?? []) rules.push({ at: path, rule });
    } else {
      // A refined named type may add rules of its own (the type's rules are in its section).
      const base = types.get(meta.name);
      if (base && base !== child) for (const rule of extraRules(child, base)) rules.push({ at: path, rule });
    }
    // List items and map values carry rules of their own when anonymous.
    const inner = !meta ? (child.items ?? child.additionalProperties) : undefined;
    if (inner && !linked(inner, types) && !inner.properties) {
      for (const rule of inner['x-kubernetes-validations'] ?? [])
        rules.push({ at: `${path}${child.items ? '[]' : '[*]'}`, rule });
    }
    const nested = inlineObject(child, types);
    if (nested && !ancestors.has(nested.node)) {
      if (nested.node !== child) {
        for (const rule of nested.node['x-kubernetes-validations'] ?? [])
          rules.push({ at: `${path}${nested.suffix}`, rule });
      }
      collect(nested.node, `${path}${nested.suffix}.`, types, fields, rules, new Set([...ancestors, nested.node]));
    }
  }
}

function fieldTable(fields: FieldRow[], types: Types): string[] {
  const lines = ['| Field | Type | Required | Default | Bounds | Description |', '|---|---|---|---|---|---|'];
  for (const field of fields) {
    const meta = linked(field.node, types);
    const base = meta ? types.get(meta.name)! : undefined;
    const fieldBounds = !base ? bounds(field.node, types) : base !== field.node ? bounds(field.node, types, base) : [];
    const values = [
      code(field.path),
      typeText(field.node, types),
      field.required ? 'yes' : '',
      field.node.default !== undefined ? code(json(field.node.default)) : '',
      fieldBounds.join('; '),
      prose(field.node.description ?? ''),
    ];
    lines.push(`| ${values.map(cell).join(' | ')} |`);
  }
  return lines;
}

function ruleLines(rules: RuleRow[]): string[] {
  return rules.map(({ at, rule }) => {
    const where = at ? `on ${code(at)}: ` : '';
    const extras: string[] = [];
    if (rule.fieldPath) extras.push(`reported on ${code(rule.fieldPath)}`);
    if (rule.reason) extras.push(rule.reason);
    const suffix = extras.length > 0 ? ` (${extras.join(', ')})` : '';
    return `- ${where}${prose(rule.message)}${suffix}: ${code(rule.rule)}`;
  });
}

function typeSection(name: string, node: SchemaNode, types: Types, file?: string): string[] {
  const meta = metaOf(node)!;
  const lines = [`<a id="${typeAnchor(name)}"></a>`, '', `### ${name}`, ''];
  if (node.description) lines.push(prose(node.description), '');
  const facts = [`Type: ${typeText(node, types, true)}`];
  const own = bounds(node, types);
  if (own.length > 0) facts.push(`Bounds: ${own.join('; ')}`);
  if (node.default !== undefined) facts.push(`Default: ${code(json(node.default))}`);
  if (file) facts.push(`Defined in: ${code(file)}`);
  lines.push(...facts.map((fact) => `- ${fact}`), '');
  if (meta.notes) lines.push(`Notes: ${prose(meta.notes)}`, '');
  const fields: FieldRow[] = [];
  const rules: RuleRow[] = (node['x-kubernetes-validations'] ?? []).map((rule) => ({ at: '', rule }));
  const shape = node.properties ? { node, suffix: '' } : inlineObject({ ...node, [META]: undefined }, types);
  if (shape) {
    if (shape.node !== node) {
      for (const rule of shape.node['x-kubernetes-validations'] ?? []) rules.push({ at: shape.suffix, rule });
    }
    collect(shape.node, shape.suffix ? `${shape.suffix}.` : '', types, fields, rules);
  }
  if (fields.length > 0) lines.push(...fieldTable(fields, types), '');
  else if (node.properties) lines.push('No fields.', '');
  if (rules.length > 0) lines.push('Rules:', '', ...ruleLines(rules), '');
  return lines;
}

/** The apiVersions a kind is served in; the stored one first, marked when there are several. */
function apiVersionsText(definition: KindDefinition): string {
  const [stored, ...others] = servedApiVersionsOf(definition).map(code);
  return others.length === 0 ? stored! : `${stored} (stored), ${others.join(', ')}`;
}

function kindSection(definition: KindDefinition, types: Types): string[] {
  const lines = [`<a id="${kindAnchor(definition)}"></a>`, '', `### ${definition.kind}`, ''];
  lines.push(prose(definition.description), '');
  const facts = [
    `apiVersion: ${apiVersionsText(definition)}`,
    `kind: ${code(definition.kind)} (list: ${code(definition.listKind)})`,
    `scope: ${definition.namespaced ? 'Namespaced' : 'Cluster'}`,
    `plural: ${code(definition.plural)}, singular: ${code(definition.singular)}`,
    `short names: ${definition.shortNames?.length ? definition.shortNames.map(code).join(', ') : 'none'}`,
  ];
  if (definition.categories?.length) facts.push(`categories: ${definition.categories.map(code).join(', ')}`);
  facts.push(`status subresource: ${definition.statusSubresource ? 'yes' : 'no'}`);
  if (definition.scaleSubresource) facts.push('scale subresource: yes (autoscaling/v1 Scale over spec.replicas)');
  if (definition.immutableFields.length > 0)
    facts.push(`immutable after creation: ${definition.immutableFields.map(code).join(', ')}`);
  facts.push(`unknown fields: ${definition.unknownFields === 'error' ? 'rejected' : 'warned about'}`);
  facts.push(`CRD emitted by ${code('gw crds')}: ${definition.crd ? 'yes' : 'no'}`);
  if (definition.notRead) facts.push(`read by gw: no, ${definition.notRead}; stored and served by gw's API server`);
  lines.push(...facts.map((fact) => `- ${fact}`), '');
  const fields: FieldRow[] = [];
  const rules: RuleRow[] = (definition.schema['x-kubernetes-validations'] ?? []).map((rule) => ({ at: '', rule }));
  collect(definition.schema, '', types, fields, rules);
  lines.push(...fieldTable(fields, types), '');
  if (rules.length > 0) lines.push('Rules:', '', ...ruleLines(rules), '');
  if (definition.printerColumns?.length) {
    lines.push('Printer columns:', '', '| Name | Type | JSONPath | Priority | Description |', '|---|---|---|---|---|');
    for (const column of definition.printerColumns) {
      const values = [
        column.name,
        column.type,
        code(column.jsonPath),
        String(column.priority ?? 0),
        prose(column.description ?? ''),
      ];
      lines.push(`| ${values.map(cell).join(' | ')} |`);
    }
    lines.push('');
  }
  return lines;
}

export interface ReferenceInput {
  types: Map<string, SchemaNode>;
  kinds: readonly KindDefinition[];
  /** The file declaring each named type (relative to the repository root), shown when known. */
  sources?: Map<string, string>;
}

/** Renders docs/reference.md. */
export function renderReference({ types, kinds, sources }: ReferenceInput): string {
  const names = [...types.keys()].sort();
  const lines = [
    '# gw API reference',
    '',
    '<!-- Generated by `npm run docs` from the schemas in src/api; do not edit by hand. -->',
    '',
    'Every kind gw reads and every named type of its API, with the bounds, defaults and CEL rules',
    'the validator (and the generated CRDs) enforce. Field paths like `a.b` are fields of an',
    'anonymous nested object; `a[]` is an item of a list and `a[*]` a value of a map.',
    '',
    '## Contents',
    '',
    '- [Kinds](#kinds)',
  ];
  for (const source of SOURCE_ORDER) {
    if (names.some((name) => metaOf(types.get(name)!)!.source === source))
      lines.push(`- [${SOURCE_TITLES[source]}](#types-${source})`);
  }
  lines.push('', '<a id="kinds"></a>', '', '## Kinds', '');
  // The registry's order: gw's kinds, then Gateway API's, then core's.
  const sortedKinds = kinds;
  lines.push('| apiVersion | Kind | Scope | Short names |', '|---|---|---|---|');
  for (const definition of sortedKinds) {
    const values = [
      apiVersionsText(definition),
      `[${definition.kind}](#${kindAnchor(definition)})`,
      definition.namespaced ? 'Namespaced' : 'Cluster',
      (definition.shortNames ?? []).join(', '),
    ];
    lines.push(`| ${values.map(cell).join(' | ')} |`);
  }
  lines.push('');
  for (const definition of sortedKinds) lines.push(...kindSection(definition, types));
  for (const source of SOURCE_ORDER) {
    const group = names.filter((name) => metaOf(types.get(name)!)!.source === source);
    if (group.length === 0) continue;
    lines.push(`<a id="types-${source}"></a>`, '', `## ${SOURCE_TITLES[source]}`, '', SOURCE_INTROS[source], '');
    lines.push(group.map((name) => `[${name}](#${typeAnchor(name)})`).join(' · '), '');
    for (const name of group) lines.push(...typeSection(name, types.get(name)!, types, sources?.get(name)));
  }
  while (lines.at(-1) === '') lines.pop();
  return `${lines.join('\n')}\n`;
}
