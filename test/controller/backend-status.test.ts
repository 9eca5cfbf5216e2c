import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GwBackendStatus } from '../../src/api/kinds/gw-backend.ts';
import { formatFieldError } from '../../src/api/validate/errors.ts';
import { validateValue } from '../../src/api/validate/schema-validator.ts';
import { backendStatus } from '../../src/controller/backends/status.ts';
import { findReferences } from '../../src/controller/references.ts';
import { snapshotOf } from '../../src/controller/snapshot.ts';
import { admitted } from '../helpers/objects.ts';

const NOW = '2026-01-01T00:00:00Z';

const BACKEND = `
apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: llm}
spec:
  ai:
    groups:
      - providers:
          - name: primary
            alpha: {}
            policies: {auth: {secretRef: {name: primary-key}}}
          - name: local
            custom: {backendRef: {name: vllm, port: 8000}, formats: [{type: Completions}]}
  policies:
    tls: {caCertificateRefs: [{name: internal-ca}], mtlsCertificateRef: [{name: client-cert}]}
`;

describe('references', () => {
  it('are found wherever they are, with their paths', () => {
    const [backend] = admitted(BACKEND);
    assert.deepEqual(
      findReferences(backend!.spec, 'spec').map((r) => `${r.kind} ${r.name} ${r.path}`),
      [
        'Secret primary-key spec.ai.groups[0].providers[0].policies.auth.secretRef',
        'Service vllm spec.ai.groups[0].providers[1].custom.backendRef',
        'ConfigMap internal-ca spec.policies.tls.caCertificateRefs[0]',
        'Secret client-cert spec.policies.tls.mtlsCertificateRef[0]',
      ],
    );
  });
});

describe('GwBackend status', () => {
  it('ResolvedRefs is False, naming each missing object and its field', () => {
    const world = admitted(`${BACKEND}---
apiVersion: v1
kind: Secret
metadata: {name: primary-key}
stringData: {Authorization: Bearer x}
`);
    const status = backendStatus(world[0]!, snapshotOf(world), NOW);
    assert.deepEqual(validateValue(GwBackendStatus, status, 'status').errors.map(formatFieldError), []);
    const resolved = status.conditions!.find((c) => c.type === 'ResolvedRefs')!;
    assert.equal(resolved.status, 'False');
    assert.equal(resolved.reason, 'RefNotFound');
    assert.equal(
      resolved.message,
      'spec.ai.groups[0].providers[1].custom.backendRef: Service default/vllm does not exist; spec.policies.tls.caCertificateRefs[0]: ConfigMap default/internal-ca does not exist; spec.policies.tls.mtlsCertificateRef[0]: Secret default/client-cert does not exist',
    );
  });

  it('ResolvedRefs is True when everything exists', () => {
    const world = admitted(`
apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: openai}
spec: {ai: {provider: {alpha: {}}}, policies: {auth: {secretRef: {name: key}}}}
---
apiVersion: v1
kind: Secret
metadata: {name: key}
stringData: {Authorization: Bearer x}
`);
    const status = backendStatus(world[0]!, snapshotOf(world), NOW);
    assert.deepEqual(
      status.conditions!.map((c) => `${c.type}=${c.status}/${c.reason}`),
      ['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs'],
    );
  });
});
