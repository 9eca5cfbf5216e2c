// The verbs of a resource over HTTP: create (POST), get and list (GET, with label and field
// selectors, limit/continue and resourceVersion), watch (GET ?watch=1), update (PUT), patch
// (PATCH: JSON patch, merge patch, strategic merge patch for the core kinds, server-side apply),
// delete and deletecollection (DELETE), and the status subresource — each answered as
// kube-apiserver answers it, with Table and PartialObjectMetadata representations on request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import type { KubeObject } from '../api/validate/admission.ts';
import { isPlainObject } from '../util/values.ts';
import { type ApiStore, PATCH_MEDIA_TYPES, type PatchType, patchTypesOf, type WriteOptions } from './api-store.ts';
import { CONTINUE_EXPIRED, decodeContinue, encodeContinue } from './continue-token.ts';
import { servedText, toServedVersion } from './conversion.ts';
import {
  ApiError,
  badRequest,
  deletedStatus,
  expired,
  methodNotAllowed,
  pathNotFound,
  tooLarge,
  unsupportedMediaType,
} from './errors.ts';
import { PROPAGATION_POLICIES, type PropagationPolicy } from './garbage-collector.ts';
import { contentTypeOf, negotiate, type Representation } from './media-types.ts';
import type { StoredObject } from './object-store.ts';
import { decodeProtobufBody } from './protobuf.ts';
import type { Route } from './request-info.ts';
import type { ApiResource } from './resources.ts';
import { RevisionCompactedError } from './revision-log.ts';
import { parseSelectors } from './selectors.ts';
import { parseIncludeObject, type TableOptions, toTable } from './table.ts';
import { serveWatch, type WatchSettings } from './watch-stream.ts';
import { parseFieldValidation } from './write-admission.ts';

export interface RestSettings {
  /** Request bodies beyond this are refused with 413 (kube-apiserver: 3 MiB). */
  maxBodyBytes: number;
  watch: WatchSettings;
  /** A watch without timeoutSeconds ends after this long (the client starts a new one). */
  defaultWatchTimeoutMs: number;
}

type ResourceRoute = Extract<Route, { type: 'resource' }>;

const REPRESENTATIONS = [
  { as: 'Table', group: 'meta.k8s.io', versions: ['v1', 'v1beta1'] },
  { as: 'PartialObjectMetadata', group: 'meta.k8s.io', versions: ['v1', 'v1beta1'] },
  { as: 'PartialObjectMetadataList', group: 'meta.k8s.io', versions: ['v1', 'v1beta1'] },
];

const PATCH_TYPES = new Map(
  (Object.entries(PATCH_MEDIA_TYPES) as [PatchType, string][]).map(([type, media]) => [media, type]),
);

/** The value of a Warning header, as Kubernetes sends it: code 299, agent "-", quoted text. */
function warningHeader(text: string): string {
  return `299 - ${JSON.stringify(text)}`;
}

export function sendJson(
  response: ServerResponse,
  code: number,
  body: unknown,
  warnings: readonly string[] = [],
): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const headers: Record<string, string | string[]> = {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-cache, private',
    'Content-Length': String(Buffer.byteLength(text)),
  };
  if (warnings.length > 0) headers.Warning = warnings.map(warningHeader);
  response.writeHead(code, headers);
  response.end(text);
}

export function sendError(response: ServerResponse, error: ApiError): void {
  sendJson(response, error.code, error.toStatus());
}

export async function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

const PROTOBUF = 'application/vnd.kubernetes.protobuf';

/** A request body as JSON, YAML (application/yaml) or Kubernetes protobuf (typed clients). */
function parseBody(body: Buffer, contentType: string): unknown {
  if (contentType === PROTOBUF) return decodeProtobufBody(body);
  const yaml = contentType === 'application/yaml';
  try {
    const text = body.toString('utf8');
    return yaml ? parseYaml(text, { maxAliasCount: 100, uniqueKeys: true }) : JSON.parse(text);
  } catch (error) {
    throw badRequest(`the request body is not valid ${yaml ? 'YAML' : 'JSON'}: ${(error as Error).message}`);
  }
}

/** fieldManager, or as Kubernetes derives it: the User-Agent up to its first "/". */
function fieldManagerOf(request: IncomingMessage, query: URLSearchParams): string {
  const given = query.get('fieldManager');
  if (given !== null && given !== '') {
    if (given.length > 128 || !/^[\x20-\x7e]*$/.test(given)) {
      throw badRequest('fieldManager must be at most 128 printable ASCII characters');
    }
    return given;
  }
  const agent = request.headers['user-agent'] ?? '';
  return agent.split('/')[0]!.slice(0, 128) || 'unknown';
}

function dryRunOf(query: URLSearchParams): boolean {
  const values = query.getAll('dryRun');
  for (const value of values) {
    if (value !== 'All') throw badRequest(`dryRun: Unsupported value: "${value}": supported values: "All"`);
  }
  return values.length > 0;
}

function booleanParam(query: URLSearchParams, name: string): boolean | undefined {
  const value = query.get(name);
  if (value === null) return undefined;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0' || value === '') return false;
  throw badRequest(`${name} must be true or false, not "${value}"`);
}

function integerParam(query: URLSearchParams, name: string): number | undefined {
  const value = query.get(name);
  if (value === null || value === '') return undefined;
  if (!/^\d+$/.test(value)) throw badRequest(`${name} must be a non-negative integer, not "${value}"`);
  return Number(value);
}

function resourceVersionParam(query: URLSearchParams): number | undefined {
  const value = query.get('resourceVersion');
  if (value === null || value === '') return undefined;
  if (!/^\d+$/.test(value)) throw badRequest(`resourceVersion must be a number, not "${value}"`);
  return Number(value);
}

/** kube-apiserver's answer to a resourceVersion the store has not reached. */
function tooLargeResourceVersion(requested: number, current: number): ApiError {
  return new ApiError(504, 'Timeout', `Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });
}

export class RestHandler {
  private readonly store: ApiStore;
  private readonly settings: RestSettings;

  constructor(store: ApiStore, settings: RestSettings) {
    this.store = store;
    this.settings = settings;
  }

  async handle(
    request: IncomingMessage,
    response: ServerResponse,
    route: ResourceRoute,
    query: URLSearchParams,
  ): Promise<void> {
    const method = request.method ?? 'GET';
    const { resource, name, subresource } = route;
    if (subresource === 'scale' && resource.scaleSubresource && name !== undefined && !route.watchPrefix) {
      return this.scale(request, response, route, query);
    }
    if (subresource !== undefined && (subresource !== 'status' || !resource.statusSubresource || name === undefined)) {
      throw pathNotFound();
    }
    if (name === undefined) {
      if (method === 'GET') {
        const watch = route.watchPrefix || booleanParam(query, 'watch') === true;
        return watch ? this.watch(request, response, route, query) : this.list(request, response, route, query);
      }
      if (method === 'POST') return this.create(request, response, route, query);
      if (method === 'DELETE') return this.deleteCollection(request, response, route, query);
      throw methodNotAllowed();
    }
    if (route.watchPrefix) throw pathNotFound();
    switch (method) {
      case 'GET':
        return this.get(request, response, route, query);
      case 'PUT':
        return this.update(request, response, route, query);
      case 'PATCH':
        return this.patch(request, response, route, query);
      case 'DELETE':
        if (subresource !== undefined) throw methodNotAllowed();
        return this.delete(request, response, route, query);
      default:
        throw methodNotAllowed();
    }
  }

  private representation(request: IncomingMessage): Representation | 'plain' {
    const chosen = negotiate(request.headers.accept, REPRESENTATIONS);
    if (chosen === undefined) {
      throw new ApiError(406, 'NotAcceptable', 'only the following media types are accepted: application/json');
    }
    return chosen;
  }

  private tableOptions(query: URLSearchParams): TableOptions {
    return { includeObject: parseIncludeObject(query.get('includeObject')) };
  }

  private writeOptions(request: IncomingMessage, query: URLSearchParams, route: ResourceRoute): WriteOptions {
    return {
      fieldManager: fieldManagerOf(request, query),
      dryRun: dryRunOf(query),
      fieldValidation: parseFieldValidation(query.get('fieldValidation')),
      subresource: route.subresource === 'status' ? 'status' : undefined,
    };
  }

  private async body(request: IncomingMessage): Promise<unknown> {
    const raw = await readBody(request, this.settings.maxBodyBytes);
    return parseBody(raw, contentTypeOf(request.headers['content-type']));
  }

  private sendObject(
    request: IncomingMessage,
    response: ServerResponse,
    resource: ApiResource,
    code: number,
    stored: KubeObject,
    query: URLSearchParams,
    warnings: readonly string[] = [],
  ): void {
    const representation = this.representation(request);
    const object = toServedVersion(resource, stored);
    if (representation === 'plain') {
      sendJson(response, code, object, warnings);
      return;
    }
    const apiVersion = `meta.k8s.io/${representation.version}`;
    if (representation.as === 'Table') {
      const table = toTable(
        resource,
        [object],
        { resourceVersion: object.metadata.resourceVersion },
        this.tableOptions(query),
      );
      sendJson(response, code, { ...table, apiVersion }, warnings);
      return;
    }
    if (representation.as === 'PartialObjectMetadata') {
      sendJson(response, code, { kind: 'PartialObjectMetadata', apiVersion, metadata: object.metadata }, warnings);
      return;
    }
    throw new ApiError(406, 'NotAcceptable', `${representation.as} is a list representation`);
  }

  private async get(request: IncomingMessage, response: ServerResponse, route: ResourceRoute, query: URLSearchParams) {
    const entry = this.store.get(route.resource, route.namespace, route.name!);
    if (this.representation(request) === 'plain')
      return sendJson(response, 200, servedText(route.resource, entry.object, entry.text));
    this.sendObject(request, response, route.resource, 200, entry.object, query);
  }

  private async list(request: IncomingMessage, response: ServerResponse, route: ResourceRoute, query: URLSearchParams) {
    const { resource, namespace } = route;
    const representation = this.representation(request);
    const selector = parseSelectors(query.get('labelSelector'), query.get('fieldSelector'));
    const limit = integerParam(query, 'limit') ?? 0;
    const continueText = query.get('continue');
    const requested = resourceVersionParam(query);
    const match = query.get('resourceVersionMatch');
    if (match !== null && match !== '' && match !== 'Exact' && match !== 'NotOlderThan') {
      throw badRequest(
        `resourceVersionMatch: Unsupported value: "${match}": supported values: "Exact", "NotOlderThan"`,
      );
    }
    if (match && requested === undefined)
      throw badRequest('resourceVersionMatch is forbidden unless resourceVersion is provided');
    const objects = this.store.objects;
    const current = objects.revision;
    let revision = current;
    let after: string | undefined;
    if (continueText) {
      if (requested !== undefined) throw badRequest('specifying resource version is not allowed when using continue');
      const token = decodeContinue(continueText);
      revision = token.revision;
      after = token.after;
    } else if (requested !== undefined) {
      if (requested > current) throw tooLargeResourceVersion(requested, current);
      if (match === 'Exact') revision = requested;
    }
    let entries: StoredObject[];
    try {
      entries = revision >= current ? objects.list(resource.kindKey) : objects.listAt(resource.kindKey, revision);
    } catch (error) {
      if (!(error instanceof RevisionCompactedError)) throw error;
      throw expired(continueText ? CONTINUE_EXPIRED : error.message);
    }
    const page: StoredObject[] = [];
    let next: string | undefined;
    let remaining = 0;
    for (const entry of entries) {
      const object = entry.object;
      if (namespace !== undefined && object.metadata.namespace !== namespace) continue;
      const key = keyOf(object, resource);
      if (after !== undefined && key <= after) continue;
      if (!selector(object)) continue;
      if (limit > 0 && page.length === limit) {
        if (next === undefined) next = encodeContinue({ revision, after: keyOf(page.at(-1)!.object, resource) });
        remaining++;
        continue;
      }
      page.push(entry);
    }
    const metadata: Record<string, unknown> = { resourceVersion: String(revision) };
    if (next !== undefined) {
      metadata.continue = next;
      metadata.remainingItemCount = remaining;
    }
    if (representation === 'plain') {
      const head = `{"kind":${JSON.stringify(resource.listKind)},"apiVersion":${JSON.stringify(resource.apiVersion)},"metadata":${JSON.stringify(metadata)},"items":[`;
      const items = page.map((entry) => servedText(resource, entry.object, entry.text));
      return sendJson(response, 200, `${head}${items.join(',')}]}`);
    }
    const apiVersion = `meta.k8s.io/${representation.version}`;
    if (representation.as === 'Table') {
      const table = toTable(
        resource,
        page.map((entry) => toServedVersion(resource, entry.object)),
        metadata,
        this.tableOptions(query),
      );
      return sendJson(response, 200, { ...table, apiVersion });
    }
    return sendJson(response, 200, {
      kind: 'PartialObjectMetadataList',
      apiVersion,
      metadata,
      items: page.map((entry) => ({ kind: 'PartialObjectMetadata', apiVersion, metadata: entry.object.metadata })),
    });
  }

  private async watch(
    request: IncomingMessage,
    response: ServerResponse,
    route: ResourceRoute,
    query: URLSearchParams,
  ) {
    const { resource, namespace } = route;
    const representation = this.representation(request);
    const selector = parseSelectors(query.get('labelSelector'), query.get('fieldSelector'));
    const requested = resourceVersionParam(query);
    const current = this.store.objects.revision;
    if (requested !== undefined && requested > current) throw tooLargeResourceVersion(requested, current);
    const sendInitialEvents = booleanParam(query, 'sendInitialEvents');
    const bookmarks = booleanParam(query, 'allowWatchBookmarks') ?? false;
    if (sendInitialEvents === true && query.get('resourceVersionMatch') !== 'NotOlderThan') {
      throw badRequest('sendInitialEvents requires resourceVersionMatch=NotOlderThan');
    }
    let fromRevision: number | undefined;
    if (sendInitialEvents === true) fromRevision = undefined;
    else if (sendInitialEvents === false) fromRevision = requested ?? current;
    else fromRevision = requested === undefined || requested === 0 ? undefined : requested;
    const timeoutSeconds = integerParam(query, 'timeoutSeconds');
    let table: TableOptions | undefined;
    if (representation !== 'plain') {
      if (representation.as !== 'Table')
        throw new ApiError(406, 'NotAcceptable', `${representation.as} is not served for watches`);
      table = this.tableOptions(query);
    }
    serveWatch(
      this.store.objects,
      response,
      {
        resource,
        namespace,
        selector,
        fromRevision,
        bookmarks,
        initialEventsEnd: sendInitialEvents === true && bookmarks,
        timeoutMs: timeoutSeconds !== undefined ? timeoutSeconds * 1000 : this.settings.defaultWatchTimeoutMs,
        table,
      },
      this.settings.watch,
    );
  }

  private async create(
    request: IncomingMessage,
    response: ServerResponse,
    route: ResourceRoute,
    query: URLSearchParams,
  ) {
    if (route.resource.namespaced && route.namespace === undefined) throw methodNotAllowed();
    const options = this.writeOptions(request, query, route);
    const body = await this.body(request);
    const result = this.store.create(route.resource, route.namespace, body, options);
    this.sendObject(request, response, route.resource, 201, result.object, query, result.warnings);
  }

  private async update(
    request: IncomingMessage,
    response: ServerResponse,
    route: ResourceRoute,
    query: URLSearchParams,
  ) {
    const options = this.writeOptions(request, query, route);
    const body = await this.body(request);
    const result = this.store.update(route.resource, route.namespace, route.name!, body, options);
    this.sendObject(
      request,
      response,
      route.resource,
      result.created ? 201 : 200,
      result.object,
      query,
      result.warnings,
    );
  }

  private async patch(
    request: IncomingMessage,
    response: ServerResponse,
    route: ResourceRoute,
    query: URLSearchParams,
  ) {
    const contentType = contentTypeOf(request.headers['content-type']);
    const type = PATCH_TYPES.get(contentType);
    if (type === undefined || (type === 'strategic' && !route.resource.listStrategies)) {
      throw unsupportedMediaType(contentType, patchTypesOf(route.resource));
    }
    const options = this.writeOptions(request, query, route);
    const force = booleanParam(query, 'force') ?? false;
    if (type === 'apply' && !query.get('fieldManager')) {
      throw badRequest('PATCH with apply-patch+yaml (server-side apply) requires the fieldManager parameter');
    }
    if (force && type !== 'apply') throw badRequest('force is allowed only for apply patches');
    const body = (await readBody(request, this.settings.maxBodyBytes)).toString('utf8');
    const result = this.store.patch(route.resource, route.namespace, route.name!, type, body, { ...options, force });
    this.sendObject(
      request,
      response,
      route.resource,
      result.created ? 201 : 200,
      result.object,
      query,
      result.warnings,
    );
  }

  /** The scale subresource: GET, PUT and PATCH of the object's autoscaling/v1 Scale. */
  private async scale(
    request: IncomingMessage,
    response: ServerResponse,
    route: ResourceRoute,
    query: URLSearchParams,
  ) {
    const { resource, namespace, name } = route;
    const method = request.method ?? 'GET';
    const options = { ...this.writeOptions(request, query, route), subresource: undefined };
    if (method === 'GET') return sendJson(response, 200, this.store.getScale(resource, namespace, name!));
    let result: { scale: KubeObject; warnings: string[] };
    if (method === 'PUT')
      result = this.store.updateScale(resource, namespace, name!, await this.body(request), options);
    else if (method === 'PATCH') {
      const contentType = contentTypeOf(request.headers['content-type']);
      const type = PATCH_TYPES.get(contentType);
      if (type === undefined) throw unsupportedMediaType(contentType, patchTypesOf(resource));
      const body = (await readBody(request, this.settings.maxBodyBytes)).toString('utf8');
      result = this.store.patchScale(resource, namespace, name!, type, body, options);
    } else throw methodNotAllowed();
    sendJson(response, 200, result.scale, result.warnings);
  }

  private async deleteOptions(request: IncomingMessage, query: URLSearchParams) {
    const raw = await readBody(request, this.settings.maxBodyBytes);
    const empty = raw.toString('utf8').trim() === '';
    const body = empty ? {} : parseBody(raw, contentTypeOf(request.headers['content-type']));
    if (!isPlainObject(body)) throw badRequest('DeleteOptions must be a JSON object');
    const preconditions = isPlainObject(body.preconditions) ? body.preconditions : {};
    const dryRun = dryRunOf(query) || (Array.isArray(body.dryRun) && body.dryRun.includes('All'));
    return {
      preconditions: {
        uid: typeof preconditions.uid === 'string' ? preconditions.uid : undefined,
        resourceVersion: typeof preconditions.resourceVersion === 'string' ? preconditions.resourceVersion : undefined,
      },
      dryRun,
      propagationPolicy: propagationPolicyOf(body, query),
    };
  }

  private async delete(
    request: IncomingMessage,
    response: ServerResponse,
    route: ResourceRoute,
    query: URLSearchParams,
  ) {
    const options = await this.deleteOptions(request, query);
    const result = this.store.delete(route.resource, route.namespace, route.name!, options);
    if (result.removed)
      return sendJson(response, 200, deletedStatus(route.resource, route.name!, result.object.metadata.uid));
    this.sendObject(request, response, route.resource, 200, result.object, query);
  }

  private async deleteCollection(
    request: IncomingMessage,
    response: ServerResponse,
    route: ResourceRoute,
    query: URLSearchParams,
  ) {
    const { resource, namespace } = route;
    const options = await this.deleteOptions(request, query);
    const selector = parseSelectors(query.get('labelSelector'), query.get('fieldSelector'));
    const deleted: KubeObject[] = [];
    for (const entry of this.store.objects.list(resource.kindKey)) {
      const object = entry.object;
      if (namespace !== undefined && object.metadata.namespace !== namespace) continue;
      if (!selector(object)) continue;
      try {
        deleted.push(this.store.delete(resource, object.metadata.namespace, object.metadata.name!, options).object);
      } catch (error) {
        // Deleted meanwhile (a namespace taking its contents): nothing left to do for it.
        if (!(error instanceof ApiError && error.code === 404)) throw error;
      }
    }
    sendJson(response, 200, {
      kind: resource.listKind,
      apiVersion: resource.apiVersion,
      metadata: { resourceVersion: String(this.store.objects.revision) },
      items: deleted.map((object) => toServedVersion(resource, object)),
    });
  }
}

/**
 * DeleteOptions.propagationPolicy (body or query), or the deprecated orphanDependents: true
 * (Orphan) and false (Background); undefined when neither is given.
 */
function propagationPolicyOf(body: Record<string, unknown>, query: URLSearchParams): PropagationPolicy | undefined {
  const policy = body.propagationPolicy ?? query.get('propagationPolicy') ?? undefined;
  const orphan = body.orphanDependents ?? query.get('orphanDependents') ?? undefined;
  if (policy !== undefined && orphan !== undefined) {
    throw badRequest('orphanDependents and propagationPolicy cannot both be set: use propagationPolicy');
  }
  if (orphan !== undefined) return orphan === true || orphan === 'true' ? 'Orphan' : 'Background';
  if (policy === undefined || policy === null || policy === '') return undefined;
  if (!PROPAGATION_POLICIES.includes(policy as PropagationPolicy)) {
    throw badRequest(
      `propagationPolicy: Unsupported value: ${JSON.stringify(policy)}: supported values: ${PROPAGATION_POLICIES.map((value) => `"${value}"`).join(', ')}`,
    );
  }
  return policy as PropagationPolicy;
}

function keyOf(object: KubeObject, resource: ApiResource): string {
  return resource.namespaced ? `${object.metadata.namespace ?? ''}/${object.metadata.name}` : object.metadata.name!;
}
