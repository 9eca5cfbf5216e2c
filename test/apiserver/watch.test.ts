import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BACKENDS_PATH, backend, CONFIG_MAPS_PATH, startTestApiServer, type TestApiServer } from './helpers.ts';

let api: TestApiServer;
before(async () => {
  api = await startTestApiServer({
    historyLimit: 20,
    settings: { watch: { bufferBytes: 256 * 1024, bookmarkIntervalMs: 50 } },
  });
});
after(() => api.close());

// biome-ignore lint/suspicious/noExplicitAny: events are read field by field
const summary = (events: any[]) => events.map((event) => `${event.type} ${event.object.metadata?.name ?? ''}`.trim());

async function revision(): Promise<string> {
  return (await api.request('GET', CONFIG_MAPS_PATH)).json.metadata.resourceVersion;
}

describe('watch', () => {
  test('ADDED, MODIFIED and DELETED after a resourceVersion, each with the object at its revision', async () => {
    const from = await revision();
    const watch = await api.stream(`${CONFIG_MAPS_PATH}?watch=1&resourceVersion=${from}`);
    assert.equal(watch.status, 200);
    await api.request('POST', CONFIG_MAPS_PATH, { body: { metadata: { name: 'w1' }, data: { v: '1' } } });
    await api.request('PATCH', `${CONFIG_MAPS_PATH}/w1`, {
      body: { data: { v: '2' } },
      contentType: 'application/merge-patch+json',
    });
    await api.request('DELETE', `${CONFIG_MAPS_PATH}/w1`);
    const events = await watch.waitFor(3);
    watch.close();
    assert.deepEqual(summary(events), ['ADDED w1', 'MODIFIED w1', 'DELETED w1']);
    assert.deepEqual(events[1].object.data, { v: '2' });
    const revisions = events.map((event) => Number(event.object.metadata.resourceVersion));
    assert.deepEqual(revisions, [Number(from) + 1, Number(from) + 2, Number(from) + 3]);
  });

  test('without a resourceVersion the current objects come first as ADDED', async () => {
    await api.request('POST', CONFIG_MAPS_PATH, { body: { metadata: { name: 'initial', labels: { set: 'i' } } } });
    const watch = await api.stream(`${CONFIG_MAPS_PATH}?watch=true&labelSelector=set%3Di`);
    const events = await watch.waitFor(1);
    watch.close();
    assert.deepEqual(summary(events), ['ADDED initial']);
  });

  test('a watch resumes from the last resourceVersion it saw, missing nothing', async () => {
    const from = await revision();
    const first = await api.stream(`${CONFIG_MAPS_PATH}?watch=1&resourceVersion=${from}`);
    await api.request('POST', CONFIG_MAPS_PATH, { body: { metadata: { name: 'r1' } } });
    const [seen] = await first.waitFor(1);
    first.close();
    // Changes while no watch is open.
    await api.request('POST', CONFIG_MAPS_PATH, { body: { metadata: { name: 'r2' } } });
    await api.request('DELETE', `${CONFIG_MAPS_PATH}/r1`);
    const second = await api.stream(
      `${CONFIG_MAPS_PATH}?watch=1&resourceVersion=${seen.object.metadata.resourceVersion}`,
    );
    const events = await second.waitFor(2);
    second.close();
    assert.deepEqual(summary(events), ['ADDED r2', 'DELETED r1']);
  });

  test('a resourceVersion older than the history gets an ERROR event: 410 Expired, as kube-apiserver words it', async () => {
    for (let i = 0; i < 40; i++) {
      await api.request('PATCH', `${CONFIG_MAPS_PATH}/initial`, {
        body: { data: { i: String(i) } },
        contentType: 'application/merge-patch+json',
      });
    }
    const watch = await api.stream(`${CONFIG_MAPS_PATH}?watch=1&resourceVersion=1`);
    assert.equal(watch.status, 200);
    const [event] = await watch.waitFor(1);
    await watch.ended;
    assert.equal(event.type, 'ERROR');
    assert.equal(event.object.kind, 'Status');
    assert.equal(event.object.code, 410);
    assert.equal(event.object.reason, 'Expired');
    assert.match(event.object.message, /^too old resource version: 1 \(\d+\)$/);
    // A list at that revision is refused the same way (the client lists again from now).
    const exact = await api.request('GET', `${CONFIG_MAPS_PATH}?resourceVersion=1&resourceVersionMatch=Exact`);
    assert.equal(exact.status, 410);
    assert.equal(exact.json.reason, 'Expired');
  });

  test('selectors: an object that starts matching is ADDED, one that stops matching is DELETED', async () => {
    const from = await revision();
    const watch = await api.stream(`${BACKENDS_PATH}?watch=1&resourceVersion=${from}&labelSelector=tier%3Dgold`);
    await api.request('POST', BACKENDS_PATH, { body: backend('sel') });
    const label = (tier: string | null) =>
      api.request('PATCH', `${BACKENDS_PATH}/sel`, {
        body: { metadata: { labels: { tier } } },
        contentType: 'application/merge-patch+json',
      });
    await label('gold');
    await api.request('PATCH', `${BACKENDS_PATH}/sel`, {
      body: { spec: { ai: { provider: { alpha: { model: 'o3' } } } } },
      contentType: 'application/merge-patch+json',
    });
    await label('silver');
    const events = await watch.waitFor(3);
    watch.close();
    assert.deepEqual(summary(events), ['ADDED sel', 'MODIFIED sel', 'DELETED sel']);
    assert.equal(events[2].object.metadata.labels.tier, 'silver', 'the DELETED event carries the object as it now is');
  });

  test('BOOKMARK events with allowWatchBookmarks, and sendInitialEvents ends its initial objects with one', async () => {
    const watch = await api.stream(
      `${CONFIG_MAPS_PATH}?watch=1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&labelSelector=set%3Di`,
    );
    const events = await watch.waitFor(3);
    watch.close();
    assert.equal(events[0].type, 'ADDED');
    assert.equal(events[1].type, 'BOOKMARK');
    assert.deepEqual(events[1].object.metadata.annotations, { 'k8s.io/initial-events-end': 'true' });
    assert.equal(events[1].object.kind, 'ConfigMap');
    assert.equal(events[2].type, 'BOOKMARK', 'periodic bookmark');
    assert.ok(Number(events[2].object.metadata.resourceVersion) >= Number(events[0].object.metadata.resourceVersion));
  });

  test('timeoutSeconds ends the watch', async () => {
    const watch = await api.stream(`${CONFIG_MAPS_PATH}?watch=1&resourceVersion=${await revision()}&timeoutSeconds=1`);
    const started = Date.now();
    await watch.ended;
    assert.ok(Date.now() - started >= 900);
  });

  test('a client that stops reading is cut off once too far behind (bounded buffer): it misses the rest', async () => {
    const watch = await api.stream(`${CONFIG_MAPS_PATH}?watch=1&resourceVersion=${await revision()}`);
    watch.pause();
    const big = 'x'.repeat(500_000);
    for (let i = 0; i < 40; i++) {
      await api.request('POST', CONFIG_MAPS_PATH, { body: { metadata: { name: `big-${i}` }, data: { big } } });
    }
    // Reading again, the client gets what was already on its way, then the end of the stream.
    watch.resume();
    const outcome = await Promise.race([
      watch.ended.then(() => 'ended'),
      new Promise((resolve) => setTimeout(() => resolve('still open'), 10_000)),
    ]);
    assert.equal(outcome, 'ended');
    assert.ok(watch.events.length > 0 && watch.events.length < 40, `${watch.events.length} events`);
  });

  test('kubectl get -w style: events as one-row Tables', async () => {
    const watch = await api.stream(`${BACKENDS_PATH}?watch=1&resourceVersion=${await revision()}`, {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
    });
    await api.request('POST', BACKENDS_PATH, { body: backend('tabled') });
    const [event] = await watch.waitFor(1);
    watch.close();
    assert.equal(event.type, 'ADDED');
    assert.equal(event.object.kind, 'Table');
    assert.deepEqual(
      event.object.columnDefinitions.map((column: { name: string }) => column.name),
      ['Name', 'Accepted', 'Age'],
    );
    assert.equal(event.object.rows[0].cells[0], 'tabled');
  });
});
