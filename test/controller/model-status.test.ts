import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GwModelStatus } from '../../src/api/kinds/gw-model.ts';
import { formatFieldError } from '../../src/api/validate/errors.ts';
import { validateValue } from '../../src/api/validate/schema-validator.ts';
import { translateGatewayApi } from '../../src/controller/gateway-api/index.ts';
import { type ModelAttachment, modelAttachments } from '../../src/controller/models/status.ts';
import { snapshotOf } from '../../src/controller/snapshot.ts';
import { admitted, GW_GATEWAY } from '../helpers/objects.ts';

const NOW = '2026-01-01T00:00:00Z';

const WORLD = `${GW_GATEWAY}apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: models}
spec:
  parentRefs: [{name: ai}]
  rules:
    - name: chat
      matches: [{path: {type: PathPrefix, value: /llm}}]
      backendRefs: [{group: gw.dev, kind: GwModel, name: '*'}]
    - name: exact
      matches: [{path: {type: Exact, value: /v1/chat/completions}}]
      backendRefs: [{group: gw.dev, kind: GwModel, name: '*'}]
    - name: mixed
      backendRefs: [{group: gw.dev, kind: GwModel, name: '*'}, {name: svc, port: 80}]
---
apiVersion: gw.dev/v1alpha1
kind: GwModel
metadata: {name: all-alpha}
spec: {parentRefs: [{name: ai}], provider: Alpha, match: {model: 'gpt-*'}, visibility: Internal}
`;

function attach(modelYaml: string): ModelAttachment {
  const objects = admitted(`${WORLD}---\n${modelYaml}`);
  const snapshot = snapshotOf(objects);
  const model = objects[objects.length - 1]!;
  const attachment = modelAttachments(snapshot, translateGatewayApi(snapshot, NOW), NOW).get(
    `default/${model.metadata.name}`,
  )!;
  assert.deepEqual(validateValue(GwModelStatus, attachment.status, 'status').errors.map(formatFieldError), []);
  return attachment;
}

function parents(attachment: ModelAttachment) {
  return attachment.status.parents!.map((p) =>
    p.conditions.map((c) => `${c.type}=${c.status}/${c.reason}: ${c.message}`),
  );
}

function model(parentRefs: string, extra = 'provider: Alpha'): string {
  return `apiVersion: gw.dev/v1alpha1
kind: GwModel
metadata: {name: m}
spec:
  parentRefs: ${parentRefs}
  ${extra}
`;
}

describe('GwModel attachment', () => {
  it('a Gateway parent attaches to its listeners', () => {
    const attachment = attach(model('[{name: ai}]'));
    assert.equal(attachment.programmed, true);
    assert.deepEqual(parents(attachment), [
      [
        'Accepted=True/Accepted: Attached to listener http of Gateway default/ai',
        'ResolvedRefs=True/ResolvedRefs: All references resolved',
      ],
    ]);
  });

  it('a listener that does not exist is NoMatchingParent', () => {
    const attachment = attach(model('[{name: ai, sectionName: https}]'));
    assert.equal(attachment.programmed, false);
    assert.match(
      parents(attachment)[0]![0]!,
      /^Accepted=False\/NoMatchingParent: Gateway default\/ai has no listener matching/,
    );
  });

  it('an HTTPRoute rule with one GwModel backend named * and PathPrefix matches', () => {
    const attachment = attach(model('[{kind: HTTPRoute, name: models, sectionName: chat}]'));
    assert.equal(attachment.programmed, true);
    assert.equal(parents(attachment)[0]![0], 'Accepted=True/Accepted: Attached to HTTPRoute default/models rule chat');
  });

  it('an HTTPRoute with several rules needs sectionName', () => {
    const attachment = attach(model('[{kind: HTTPRoute, name: models}]'));
    assert.equal(
      parents(attachment)[0]![0],
      'Accepted=False/UnsupportedValue: HTTPRoute default/models has 3 rules; name the rule to attach to with sectionName',
    );
  });

  it('a rule with an Exact path match or other backends is refused', () => {
    assert.equal(
      parents(attach(model('[{kind: HTTPRoute, name: models, sectionName: exact}]')))[0]![0],
      'Accepted=False/UnsupportedValue: HTTPRoute default/models rule exact may only use PathPrefix path matches',
    );
    assert.equal(
      parents(attach(model('[{kind: HTTPRoute, name: models, sectionName: mixed}]')))[0]![0],
      'Accepted=False/UnsupportedValue: HTTPRoute default/models rule mixed must have exactly one backendRef, to group gw.dev kind GwModel name "*"',
    );
  });

  it('virtual model targets must exist, and name the model when the target matches a wildcard', () => {
    const missing = attach(
      model('[{name: ai}]', 'virtualModel: {failover: {targets: [{modelRef: {name: nowhere}, priority: 0}]}}'),
    );
    assert.equal(missing.programmed, false);
    assert.equal(parents(missing)[0]![1], 'ResolvedRefs=False/ModelNotFound: GwModel default/nowhere does not exist');
    const wildcard = attach(
      model('[{name: ai}]', 'virtualModel: {weighted: {targets: [{modelRef: {name: all-alpha}}]}}'),
    );
    assert.equal(
      parents(wildcard)[0]![1],
      'ResolvedRefs=False/InvalidModelRef: GwModel default/all-alpha matches "gpt-*"; the target must name the model to send with model',
    );
    const named = attach(
      model('[{name: ai}]', 'virtualModel: {weighted: {targets: [{modelRef: {name: all-alpha}, model: gpt-4o}]}}'),
    );
    assert.equal(named.programmed, true);
  });
});

describe('GwModel ResolvedRefs: the contents of the Secret its auth reads', () => {
  const withSecret = (data: string) =>
    parents(
      attach(`apiVersion: v1
kind: Secret
metadata: {name: provider-key}
stringData: ${data}
---
${model('[{name: ai}]', 'provider: Alpha\n  policies: {auth: {secretRef: {name: provider-key}}}')}`),
    )[0]!.find((line) => line.startsWith('ResolvedRefs'));

  it('a Secret without the data key is InvalidCredentialRef, naming the field, Secret and key', () => {
    assert.equal(
      withSecret('{token: sk-never-shown}'),
      'ResolvedRefs=False/InvalidCredentialRef: spec.policies.auth.secretRef.key: Secret default/provider-key has no key "Authorization"',
    );
  });

  it('the Secret holding the key resolves', () => {
    assert.equal(withSecret('{Authorization: sk-present}'), 'ResolvedRefs=True/ResolvedRefs: All references resolved');
  });
});
