import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeObject } from '../../src/api/validate/admission.ts';
import { ApiError } from '../../src/apiserver/errors.ts';
import { compileJsonPath } from '../../src/apiserver/json-path.ts';
import { parseFieldSelector, parseLabelSelector } from '../../src/apiserver/selectors.ts';
import { humanDuration } from '../../src/apiserver/table.ts';

const object = (name: string, labels: Record<string, string>, namespace = 'default') =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels } }) as KubeObject;

describe('label selectors', () => {
  const objects = [
    object('a', { app: 'web', tier: 'front', replicas: '3' }),
    object('b', { app: 'web', tier: 'back' }),
    object('c', { app: 'db' }),
    object('d', {}),
  ];
  const select = (text: string) => objects.filter(parseLabelSelector(text)).map((item) => item.metadata.name);

  test('equality, inequality, sets, existence and numeric comparisons', () => {
    assert.deepEqual(select('app=web'), ['a', 'b']);
    assert.deepEqual(select('app==web,tier!=front'), ['b']);
    assert.deepEqual(select('app!=web'), ['c', 'd'], '!= matches objects without the label');
    assert.deepEqual(select('tier in (front, back)'), ['a', 'b']);
    assert.deepEqual(select('tier notin (front)'), ['b', 'c', 'd']);
    assert.deepEqual(select('tier'), ['a', 'b']);
    assert.deepEqual(select('!tier'), ['c', 'd']);
    assert.deepEqual(select('replicas>2'), ['a']);
    assert.deepEqual(select('replicas<2'), []);
    assert.deepEqual(select(''), ['a', 'b', 'c', 'd']);
  });

  test('malformed selectors are 400 Bad Request', () => {
    for (const text of ['app=web,', 'a b', 'app=we b', '-bad!=x', 'n>x']) {
      assert.throws(
        () => parseLabelSelector(text),
        (error: unknown) => error instanceof ApiError && error.code === 400,
        text,
      );
    }
  });
});

describe('field selectors', () => {
  test('metadata.name and metadata.namespace with =, == and !=', () => {
    const items = [object('a', {}), object('b', {}, 'other')];
    const names = (text: string) => items.filter(parseFieldSelector(text)).map((item) => item.metadata.name);
    assert.deepEqual(names('metadata.name=a'), ['a']);
    assert.deepEqual(names('metadata.namespace==other'), ['b']);
    assert.deepEqual(names('metadata.name!=a,metadata.namespace!=default'), ['b']);
    assert.throws(() => parseFieldSelector('status.phase=Active'), /not a known field selector/);
  });
});

describe('printer columns', () => {
  test('JSONPath: fields, filters, wildcards and indexes', () => {
    const value = {
      status: {
        conditions: [
          { type: 'Accepted', status: 'True' },
          { type: 'Programmed', status: 'False' },
        ],
        ancestors: [{ conditions: [{ type: 'Accepted', status: 'Unknown' }] }],
      },
      spec: { hostnames: ['a.example', 'b.example'] },
    };
    assert.deepEqual(compileJsonPath(".status.conditions[?(@.type=='Accepted')].status")(value), ['True']);
    assert.deepEqual(compileJsonPath('.status.conditions[?(@.type=="Programmed")].status')(value), ['False']);
    assert.deepEqual(compileJsonPath(".status.ancestors[*].conditions[?(@.type=='Accepted')].status")(value), [
      'Unknown',
    ]);
    assert.deepEqual(compileJsonPath('.spec.hostnames')(value), [['a.example', 'b.example']]);
    assert.deepEqual(compileJsonPath('.spec.hostnames[1]')(value), ['b.example']);
    assert.deepEqual(compileJsonPath('.spec.missing')(value), []);
    assert.throws(() => compileJsonPath('.a[?(@.x > 1)]'));
  });

  test('ages read as kubectl shows them', () => {
    const s = 1000;
    assert.equal(humanDuration(5 * s), '5s');
    assert.equal(humanDuration(119 * s), '119s');
    assert.equal(humanDuration(125 * s), '2m5s');
    assert.equal(humanDuration(600 * s), '10m');
    assert.equal(humanDuration(3 * 3600 * s + 5 * 60 * s), '3h5m');
    assert.equal(humanDuration(30 * 3600 * s), '30h');
    assert.equal(humanDuration(50 * 3600 * s), '2d2h');
    assert.equal(humanDuration(400 * 86400 * s), '400d');
    assert.equal(humanDuration(800 * 86400 * s), '2y70d');
    assert.equal(humanDuration(-500), '0s');
  });
});
