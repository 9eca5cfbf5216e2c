// Objects: the list of every object gw reads, one object with its status, and — when gw serves its
// own API server — create, replace (YAML text) and delete, sent to that API server as kubectl
// sends them, so they pass the same authentication and admission; its refusals come back with
// their field paths. A Secret's values never leave gw: it is shown by its keys, and the UI does not
// write Secrets (kubectl does); nor do inline credentials, which a replace gets back from the stored
// object (security/redaction.ts). With files or a cluster as the source, writes are refused.
import { parseAllDocuments, stringify } from 'yaml';
import type { KubeObject } from '../../../api/validate/admission.ts';
import { type ApiResource, resourceOfKind, resourceOfVersion } from '../../../apiserver/resources.ts';
import { SNAPSHOT_KINDS } from '../../../controller/snapshot.ts';
import { statusesByObject, statusKey } from '../../../controller/status-report.ts';
import type { KindKey } from '../../../store/store.ts';
import { type Restored, redactObject, restoreCredentials, withoutRestored } from '../security/redaction.ts';
import { type JsonAnswer, json, problem, type UiContext, type UiEndpoint } from './endpoint.ts';
import { refOf } from './object-ref.ts';

const SECRET = '/Secret';

function findObject(context: UiContext, query: URLSearchParams): { object: KubeObject; kindKey: string } | JsonAnswer {
  const kindKey = query.get('kind');
  const name = query.get('name');
  if (!kindKey || !name) return problem(400, 'give kind (group/Kind, as /ui/api/objects lists it), namespace and name');
  if (!Object.values<string>(SNAPSHOT_KINDS).includes(kindKey)) return problem(404, `gw does not read ${kindKey}`);
  const namespace = query.get('namespace') ?? undefined;
  const object = context.sources.controller.objects
    .list(kindKey as KindKey)
    .items.find((o) => o.metadata.name === name && (o.metadata.namespace ?? undefined) === namespace);
  if (!object)
    return problem(404, `${kindKey.split('/')[1]} ${namespace ? `${namespace}/` : ''}${name} does not exist`);
  return { object, kindKey };
}

/** The API server path of a resource's collection (or of one object, with `name`). */
function resourcePath(resource: ApiResource, namespace: string | undefined, name?: string): string {
  const base = resource.group === '' ? `/api/${resource.version}` : `/apis/${resource.group}/${resource.version}`;
  const scope = resource.namespaced ? `/namespaces/${encodeURIComponent(namespace ?? 'default')}` : '';
  return `${base}${scope}/${resource.plural}${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;
}

/**
 * The API server's answer for the UI: the object (redacted), or its Status's message and causes
 * (field paths) — without the credentials gw put back into the object it sent (`restored`).
 */
function fromApiServer(answer: { status: number; body: unknown }, kindKey: string, restored?: Restored): JsonAnswer {
  if (answer.status >= 200 && answer.status < 300) {
    const object = answer.body as KubeObject | undefined;
    return json({ object: object?.metadata ? redactObject(object, kindKey) : undefined }, answer.status);
  }
  const status = answer.body as {
    message?: string;
    reason?: string;
    details?: { causes?: { field?: string; message?: string; reason?: string }[] };
  };
  const text = (value: string | undefined) =>
    value === undefined || !restored ? value : withoutRestored(value, restored);
  return problem(answer.status, text(status?.message) ?? `the API server answered ${answer.status}`, {
    reason: status?.reason,
    causes: (status?.details?.causes ?? []).map((cause) => ({ field: cause.field, message: text(cause.message) })),
  });
}

/** The one object a YAML text holds, and its resource, or why not. */
function parseObject(body: unknown): { object: KubeObject; resource: ApiResource } | JsonAnswer {
  const text = (body as { yaml?: unknown } | undefined)?.yaml;
  if (typeof text !== 'string' || text.trim() === '') return problem(400, 'give the object as YAML text (yaml)');
  const documents = parseAllDocuments(text);
  if (!Array.isArray(documents) || documents.length !== 1)
    return problem(400, 'give exactly one object (one YAML document)');
  const document = documents[0]!;
  if (document.errors.length > 0) {
    const error = document.errors[0]!;
    const line = error.linePos?.[0];
    return problem(
      400,
      `the YAML does not parse${line ? ` (line ${line.line}, column ${line.col})` : ''}: ${error.message.split('\n')[0]}`,
    );
  }
  const object = document.toJS() as KubeObject;
  if (
    typeof object !== 'object' ||
    object === null ||
    typeof object.apiVersion !== 'string' ||
    typeof object.kind !== 'string'
  )
    return problem(400, 'the object needs apiVersion and kind', {
      causes: [{ field: 'apiVersion', message: 'Required value' }],
    });
  const resource = resourceOfVersion(object.apiVersion, object.kind);
  if (!resource) return problem(400, `gw's API server has no kind ${object.kind} in ${object.apiVersion}`);
  if (resource.kindKey === SECRET)
    return problem(403, 'the UI does not write Secrets (it never holds their values): use kubectl');
  return { object, resource };
}

/** Writes go to gw's own API server only; the reason otherwise. */
function apiServerOf(context: UiContext) {
  const { source } = context.sources;
  return source.kind === 'api-server' ? source.api : source.why;
}

/** Creates the object the YAML holds, or replaces the one it names, through gw's API server. */
async function write(context: UiContext, body: unknown, how: 'create' | 'replace'): Promise<JsonAnswer> {
  const api = apiServerOf(context);
  if (typeof api === 'string') return problem(403, `read-only: ${api}`);
  const parsed = parseObject(body);
  if (!('object' in parsed)) return parsed;
  const { object, resource } = parsed;
  const { namespace, name } = object.metadata ?? {};
  if (how === 'replace' && !name)
    return problem(422, 'the object needs a name', { causes: [{ field: 'metadata.name', message: 'Required value' }] });
  // The object was edited from its redacted view: credentials still hidden get their stored values.
  let stored: KubeObject | undefined;
  if (how === 'replace') {
    const current = await api.request('GET', resourcePath(resource, namespace, name));
    if (current.status !== 200 && current.status !== 404) return fromApiServer(current, resource.kindKey);
    if (current.status === 200) stored = current.body as KubeObject;
  }
  const restored = restoreCredentials(object, stored, resource.kindKey);
  if (!('values' in restored))
    return problem(422, restored.message, { causes: [{ field: restored.field, message: restored.message }] });
  const answer =
    how === 'create'
      ? await api.request('POST', resourcePath(resource, namespace), object)
      : await api.request('PUT', resourcePath(resource, namespace, name), object);
  return fromApiServer(answer, resource.kindKey, restored);
}

export const objectEndpoints: UiEndpoint[] = [
  {
    method: 'GET',
    path: '/ui/api/objects',
    handle: ({ sources }) => {
      const store = sources.controller.objects;
      const objects = Object.values(SNAPSHOT_KINDS).flatMap((kindKey) =>
        store.list(kindKey).items.map((object) => refOf(kindKey, object)),
      );
      return json({ objects });
    },
  },
  {
    method: 'GET',
    path: '/ui/api/object',
    handle: (context, { query }) => {
      const found = findObject(context, query);
      if (!('object' in found)) return found;
      const { object, kindKey } = found;
      const status = statusesByObject(context.sources.controller.objects).get(
        statusKey(kindKey, object.metadata.namespace, object.metadata.name ?? ''),
      );
      const writable = context.sources.source.kind === 'api-server' && kindKey !== SECRET;
      const view = redactObject(object, kindKey);
      // What an edit starts from: the object without its status (a subresource the controller writes).
      const { status: _status, ...editable } = view;
      return json({ object: view, yaml: stringify(editable), status, writable });
    },
  },
  { method: 'POST', path: '/ui/api/object', handle: (context, { body }) => write(context, body, 'create') },
  { method: 'PUT', path: '/ui/api/object', handle: (context, { body }) => write(context, body, 'replace') },
  {
    method: 'DELETE',
    path: '/ui/api/object',
    handle: async (context, { query }) => {
      const api = apiServerOf(context);
      if (typeof api === 'string') return problem(403, `read-only: ${api}`);
      const kindKey = query.get('kind');
      const name = query.get('name');
      const resource = kindKey ? resourceOfKind(kindKey as KindKey) : undefined;
      if (!resource || !name) return problem(400, 'give kind (group/Kind), namespace and name');
      const answer = await api.request('DELETE', resourcePath(resource, query.get('namespace') ?? undefined, name));
      return fromApiServer(answer, resource.kindKey);
    },
  },
];
