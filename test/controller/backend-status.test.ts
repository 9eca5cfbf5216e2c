import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
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

describe('GwBackend status: the contents of the Secrets backend authentication reads', () => {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const backend = (auth: string) => `
apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: llm}
spec: {ai: {provider: {alpha: {}}}, policies: {auth: ${auth}}}
`;
  const secret = (name: string, data: Record<string, string>) =>
    `---\napiVersion: v1\nkind: Secret\nmetadata: {name: ${name}}\nstringData: ${JSON.stringify(data)}\n`;
  const resolvedRefs = (yaml: string) => {
    const world = admitted(yaml);
    const status = backendStatus(world[0]!, snapshotOf(world), NOW);
    assert.deepEqual(validateValue(GwBackendStatus, status, 'status').errors.map(formatFieldError), []);
    return status.conditions!.find((c) => c.type === 'ResolvedRefs')!;
  };

  it('a secretRef Secret without the data key is InvalidCredentialRef, naming the field, Secret and key', () => {
    const resolved = resolvedRefs(backend('{secretRef: {name: key}}') + secret('key', { apiKey: 'sk-secret-value' }));
    assert.equal(resolved.status, 'False');
    assert.equal(resolved.reason, 'InvalidCredentialRef');
    assert.equal(resolved.message, 'spec.policies.auth.secretRef.key: Secret default/key has no key "Authorization"');
    assert.doesNotMatch(resolved.message, /sk-secret-value/);
  });

  it('an empty value and a credentials entry missing its key are named too', () => {
    const resolved = resolvedRefs(
      backend(
        '{secretRef: {name: key, key: token}, credentials: [{secretRef: {name: extra, key: org}, location: {header: {name: x-org}}}]}',
      ) +
        secret('key', { token: '  ' }) +
        secret('extra', {}),
    );
    assert.equal(resolved.reason, 'InvalidCredentialRef');
    assert.equal(
      resolved.message,
      'spec.policies.auth.secretRef.key: key "token" of Secret default/key is empty; spec.policies.auth.credentials[0].secretRef.key: Secret default/extra has no key "org"',
    );
  });

  it('a jwtSign Secret holding garbage, or a key that does not suit alg, is InvalidCredentialRef', () => {
    const jwt = (alg: string) => `{jwtSign: {alg: ${alg}, signingKeyRef: {name: signer}, claims: {iss: gw}}}`;
    const garbage = resolvedRefs(backend(jwt('ES256')) + secret('signer', { signingKey: 'not a key' }));
    assert.equal(garbage.status, 'False');
    assert.equal(garbage.reason, 'InvalidCredentialRef');
    assert.equal(
      garbage.message,
      'spec.policies.auth.jwtSign.signingKeyRef: key "signingKey" of Secret default/signer is not an unencrypted PEM RSA or EC private key',
    );
    const wrongAlg = resolvedRefs(backend(jwt('RS256')) + secret('signer', { signingKey: pem }));
    assert.equal(
      wrongAlg.message,
      'spec.policies.auth.jwtSign.signingKeyRef: key "signingKey" of Secret default/signer is a ec key; RS256 needs an RSA key',
    );
    const missing = resolvedRefs(backend(jwt('ES256')) + secret('signer', { key: pem }));
    assert.equal(
      missing.message,
      'spec.policies.auth.jwtSign.signingKeyRef.key: Secret default/signer has no key "signingKey"',
    );
    const fixed = resolvedRefs(backend(jwt('ES256')) + secret('signer', { signingKey: pem }));
    assert.equal(`${fixed.status}/${fixed.reason}`, 'True/ResolvedRefs');
  });

  it('a beta secretRef Secret needs clientID, tenantID and clientSecret, non-empty, and a tenant ID', () => {
    const beta = backend('{beta: {secretRef: {name: azure}}}');
    const full = { clientID: 'app-1', tenantID: 'contoso.onmicrosoft.com', clientSecret: 'azure-secret-value' };
    const missing = resolvedRefs(beta + secret('azure', { clientID: 'app-1', tenantID: 'contoso.onmicrosoft.com' }));
    assert.equal(missing.status, 'False');
    assert.equal(missing.reason, 'InvalidCredentialRef');
    assert.equal(
      missing.message,
      'spec.policies.auth.beta.secretRef.key: Secret default/azure has no key "clientSecret"',
    );
    const empty = resolvedRefs(beta + secret('azure', { ...full, clientID: ' ' }));
    assert.equal(
      empty.message,
      'spec.policies.auth.beta.secretRef.key: key "clientID" of Secret default/azure is empty',
    );
    const tenant = resolvedRefs(beta + secret('azure', { ...full, tenantID: 'not a tenant' }));
    assert.match(
      tenant.message,
      /^spec\.policies\.auth\.beta\.secretRef\.key: key "tenantID" of Secret default\/azure is not a tenant ID/,
    );
    for (const condition of [missing, empty, tenant]) assert.doesNotMatch(condition.message, /azure-secret-value/);
    const fine = resolvedRefs(beta + secret('azure', full));
    assert.equal(`${fine.status}/${fine.reason}`, 'True/ResolvedRefs');
  });

  it('a cloudtwo Secret without credentials.json, with no JSON or with credentials gw does not take is InvalidCredentialRef', () => {
    const cloudtwo = backend('{cloudtwo: {secretRef: {name: google}}}');
    const missing = resolvedRefs(cloudtwo + secret('google', { 'key.json': '{}' }));
    assert.equal(missing.reason, 'InvalidCredentialRef');
    assert.equal(
      missing.message,
      'spec.policies.auth.cloudtwo.secretRef.key: Secret default/google has no key "credentials.json"',
    );
    const notJson = resolvedRefs(cloudtwo + secret('google', { 'credentials.json': '{"private_key": "MIIsecret' }));
    assert.equal(
      notJson.message,
      'spec.policies.auth.cloudtwo.secretRef: key "credentials.json" of Secret default/google is not JSON: give the credentials JSON file Google issued',
    );
    const external = resolvedRefs(
      cloudtwo + secret('google', { 'credentials.json': JSON.stringify({ type: 'external_account' }) }),
    );
    assert.match(
      external.message,
      /^spec\.policies\.auth\.cloudtwo\.secretRef: key "credentials\.json" of Secret default\/google holds external_account credentials/,
    );
    const { privateKey: rsa } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const serviceAccount = {
      type: 'service_account',
      client_email: 'gw@project.iam.gserviceaccount.com',
      private_key: rsa.export({ type: 'pkcs8', format: 'pem' }).toString(),
    };
    const valid = resolvedRefs(cloudtwo + secret('google', { 'credentials.json': JSON.stringify(serviceAccount) }));
    assert.equal(`${valid.status}/${valid.reason}`, 'True/ResolvedRefs');
  });

  it('the OAuth client Secrets of oauthTokenExchange and crossAppAccess are judged: secret, signing key, certificate', () => {
    const certificate = readFileSync(new URL('../fixtures/tls/a.crt', import.meta.url), 'utf8');
    const privateKeyJwt = (extra = '') =>
      `{method: PrivateKeyJwt, clientId: gw, privateKeyJwt: {signingKeyRef: {name: signer}, alg: ES256, assertionAudience: idp${extra}}}`;
    const exchange = (clientAuth: string) =>
      backend(`{oauthTokenExchange: {url: "https://idp.example/token", clientAuth: ${clientAuth}}}`);
    const noSecretKey = resolvedRefs(
      exchange('{clientId: gw, secretRef: {name: client}}') + secret('client', { Authorization: 'x' }),
    );
    assert.equal(noSecretKey.reason, 'InvalidCredentialRef');
    assert.equal(
      noSecretKey.message,
      'spec.policies.auth.oauthTokenExchange.clientAuth.secretRef.key: Secret default/client has no key "clientSecret"',
    );
    const ok = resolvedRefs(
      exchange('{clientId: gw, secretRef: {name: client}}') + secret('client', { clientSecret: 's3' }),
    );
    assert.equal(`${ok.status}/${ok.reason}`, 'True/ResolvedRefs');

    const badKey = resolvedRefs(exchange(privateKeyJwt()) + secret('signer', { signingKey: 'not a key' }));
    assert.equal(
      badKey.message,
      'spec.policies.auth.oauthTokenExchange.clientAuth.privateKeyJwt.signingKeyRef: key "signingKey" of Secret default/signer is not an unencrypted PEM RSA or EC private key',
    );
    const withCertificate = privateKeyJwt(', certificateRef: {name: signer}, certificateHeader: x5c');
    const badCertificate = resolvedRefs(
      exchange(withCertificate) + secret('signer', { signingKey: pem, certificate: 'not a certificate' }),
    );
    assert.equal(
      badCertificate.message,
      'spec.policies.auth.oauthTokenExchange.clientAuth.privateKeyJwt.certificateRef: key "certificate" of Secret default/signer holds no PEM certificate',
    );
    const good = resolvedRefs(exchange(withCertificate) + secret('signer', { signingKey: pem, certificate }));
    assert.equal(`${good.status}/${good.reason}`, 'True/ResolvedRefs');

    const crossApp = resolvedRefs(
      `
apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: api}
spec:
  static: {host: api.example, port: 443}
  policies:
    auth:
      crossAppAccess:
        audience: https://ras.example
        identityProvider: {url: "https://idp.example/token", clientAuth: {clientId: gw, secretRef: {name: client}}}
        resourceAuthorizationServer: {url: "https://ras.example/token", clientAuth: ${privateKeyJwt()}}
` +
        secret('client', { clientSecret: ' ' }) +
        secret('signer', { other: pem }),
    );
    assert.equal(crossApp.reason, 'InvalidCredentialRef');
    assert.equal(
      crossApp.message,
      'spec.policies.auth.crossAppAccess.identityProvider.clientAuth.secretRef.key: key "clientSecret" of Secret default/client is empty; spec.policies.auth.crossAppAccess.resourceAuthorizationServer.clientAuth.privateKeyJwt.signingKeyRef.key: Secret default/signer has no key "signingKey"',
    );
  });

  it('a cloudone Secret needs accessKey and secretKey, non-empty (sessionToken optional)', () => {
    const aws = '{cloudone: {secretRef: {name: aws}, serviceName: bedrock, region: us-east-1}}';
    const noSecretKey = resolvedRefs(backend(aws) + secret('aws', { accessKey: 'AKIDEXAMPLE' }));
    assert.equal(noSecretKey.status, 'False');
    assert.equal(noSecretKey.reason, 'InvalidCredentialRef');
    assert.equal(
      noSecretKey.message,
      'spec.policies.auth.cloudone.secretRef.key: Secret default/aws has no key "secretKey"',
    );
    const empty = resolvedRefs(backend(aws) + secret('aws', { accessKey: ' ', secretKey: 'wJalrXUtnFEMI' }));
    assert.equal(
      empty.message,
      'spec.policies.auth.cloudone.secretRef.key: key "accessKey" of Secret default/aws is empty',
    );
    assert.doesNotMatch(`${noSecretKey.message}${empty.message}`, /AKIDEXAMPLE|wJalrXUtnFEMI/);
    const fixed = resolvedRefs(backend(aws) + secret('aws', { accessKey: 'AKIDEXAMPLE', secretKey: 'wJalrXUtnFEMI' }));
    assert.equal(`${fixed.status}/${fixed.reason}`, 'True/ResolvedRefs');
    const withToken = resolvedRefs(
      backend(aws) + secret('aws', { accessKey: 'AKIDEXAMPLE', secretKey: 'wJalrXUtnFEMI', sessionToken: 'FwoG' }),
    );
    assert.equal(`${withToken.status}/${withToken.reason}`, 'True/ResolvedRefs');
  });

  it('a missing Secret stays RefNotFound and is not judged for contents', () => {
    const resolved = resolvedRefs(backend('{secretRef: {name: absent}}'));
    assert.equal(resolved.reason, 'RefNotFound');
    assert.equal(resolved.message, 'spec.policies.auth.secretRef: Secret default/absent does not exist');
  });
});
