// A watch over HTTP: a stream of newline-delimited JSON events {"type", "object"} — ADDED,
// MODIFIED, DELETED, BOOKMARK, and ERROR (a Status, for a resourceVersion too old: 410 Expired as
// kube-apiserver sends it, inside the stream). Selectors apply to events as Kubernetes applies
// them: an object that stops matching is DELETED for this watcher, one that starts matching is
// ADDED. The stream is bounded: a client that does not read falls behind at most `bufferBytes`
// before the server ends its watch (the client resumes from its last resourceVersion).
import type { ServerResponse } from 'node:http';
import type { KubeObject } from '../api/validate/admission.ts';
import { servedText, toServedVersion } from './conversion.ts';
import { expired } from './errors.ts';
import type { ObjectEvent, ObjectStore } from './object-store.ts';
import type { ApiResource } from './resources.ts';
import { RevisionCompactedError } from './revision-log.ts';
import type { Selector } from './selectors.ts';
import { type TableOptions, toTable } from './table.ts';

export interface WatchRequest {
  resource: ApiResource;
  /** Only objects of this namespace (undefined: all). */
  namespace: string | undefined;
  selector: Selector;
  /** Changes after this revision; undefined: the current objects as ADDED events first. */
  fromRevision: number | undefined;
  /** Send BOOKMARK events (allowWatchBookmarks). */
  bookmarks: boolean;
  /** sendInitialEvents: end the initial ADDED events with a BOOKMARK marked initial-events-end. */
  initialEventsEnd: boolean;
  timeoutMs: number;
  /** Events as one-row Tables (kubectl get -w). */
  table: TableOptions | undefined;
}

export interface WatchSettings {
  bufferBytes: number;
  bookmarkIntervalMs: number;
}

type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** Streams a watch until the client leaves, the timeout passes, or the client falls too far behind. */
export function serveWatch(
  store: ObjectStore,
  response: ServerResponse,
  request: WatchRequest,
  settings: WatchSettings,
): void {
  const { resource, namespace, selector } = request;
  response.writeHead(200, {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-cache, private',
    'Transfer-Encoding': 'chunked',
  });
  response.flushHeaders();
  let stopWatch: (() => void) | undefined;
  let bookmarkTimer: NodeJS.Timeout | undefined;
  let timeoutTimer: NodeJS.Timeout | undefined;
  let ended = false;
  const end = (abort = false) => {
    if (ended) return;
    ended = true;
    stopWatch?.();
    clearInterval(bookmarkTimer);
    clearTimeout(timeoutTimer);
    // A client too far behind is cut off at once: what it has not read is dropped, not kept.
    if (abort) response.destroy();
    else response.end();
  };
  response.on('close', () => end());

  const send = (type: string, object: unknown) => {
    if (ended) return;
    // Judged on what is still unsent from earlier events, so that one large object passes.
    if (response.writableLength > settings.bufferBytes) {
      end(true);
      return;
    }
    response.write(`{"type":"${type}","object":${typeof object === 'string' ? object : JSON.stringify(object)}}\n`);
  };
  const sendObject = (type: EventType, object: KubeObject, text: string) => {
    if (request.table) {
      const served = toServedVersion(resource, object);
      send(type, toTable(resource, [served], { resourceVersion: object.metadata.resourceVersion }, request.table));
    } else send(type, servedText(resource, object, text));
  };
  const visible = (object: KubeObject | undefined) =>
    object !== undefined && (namespace === undefined || object.metadata.namespace === namespace) && selector(object);
  const bookmark = (annotations?: Record<string, string>) => {
    const metadata: Record<string, unknown> = { resourceVersion: String(store.revision) };
    if (annotations) metadata.annotations = annotations;
    send('BOOKMARK', { kind: resource.kind, apiVersion: resource.apiVersion, metadata });
  };
  const onEvent = (event: ObjectEvent) => {
    const now = visible(event.object);
    const before = event.type === 'MODIFIED' ? visible(event.previous) : now;
    if (event.type === 'DELETED') {
      if (now) sendObject('DELETED', event.object, event.text);
    } else if (event.type === 'ADDED') {
      if (now) sendObject('ADDED', event.object, event.text);
    } else if (now && before) sendObject('MODIFIED', event.object, event.text);
    else if (now) sendObject('ADDED', event.object, event.text);
    else if (before) sendObject('DELETED', event.object, event.text);
  };

  let from = request.fromRevision;
  if (from === undefined) {
    from = store.revision;
    for (const entry of store.list(resource.kindKey)) {
      if (visible(entry.object)) sendObject('ADDED', entry.object, entry.text);
    }
    if (request.initialEventsEnd) bookmark({ 'k8s.io/initial-events-end': 'true' });
  }
  try {
    stopWatch = store.watch(resource.kindKey, from, onEvent);
  } catch (error) {
    if (!(error instanceof RevisionCompactedError)) throw error;
    send('ERROR', expired(error.message).toStatus());
    end();
    return;
  }
  if (request.bookmarks) bookmarkTimer = setInterval(() => bookmark(), settings.bookmarkIntervalMs);
  timeoutTimer = setTimeout(() => end(), request.timeoutMs);
}
