// The enforcement registry (src/contract/enforcement): every leaf field of every place is declared
// enforced (by a module that exists) or refused, with no stale declaration; the checker finds each
// kind of mistake in a broken registry; refusalsIn finds what a value sets that a place refuses,
// with the user's paths; docs/enforcement.md is current; the folder imports only src/api, src/util and
// the contract's configuration types.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { type RegistryProblems, registryProblems } from '../../src/contract/enforcement/consistency.ts';
import { ENFORCEMENT_DOC, renderEnforcement } from '../../src/contract/enforcement/docs.ts';
import { type Enforcement, enforced, refused } from '../../src/contract/enforcement/enforcement.ts';
import { PLACE_NAMES } from '../../src/contract/enforcement/places.ts';
import { MODULES_IN_PROGRESS, PLACE_DECLARATIONS, TYPE_DECLARATIONS } from '../../src/contract/enforcement/registry.ts';
import {
  type Declarations,
  leavesOf,
  RegistryWalk,
  refusalsIn,
  UNDECLARED_REASON,
} from '../../src/contract/enforcement/walk.ts';

const root = new URL('../../', import.meta.url).pathname;
const declarations: Declarations = { types: TYPE_DECLARATIONS, places: PLACE_DECLARATIONS };

function problemsOf(changed: Declarations): RegistryProblems {
  return registryProblems(new RegistryWalk(changed), changed, { root, inProgress: MODULES_IN_PROGRESS });
}

/** The real type declarations with `type` changed by `change`. */
function withType(type: string, change: (fields: Record<string, Enforcement>) => void): Declarations {
  const fields = { ...TYPE_DECLARATIONS[type] };
  change(fields);
  return { types: { ...TYPE_DECLARATIONS, [type]: fields }, places: PLACE_DECLARATIONS };
}

function listed(lines: readonly string[]): string {
  return `\n  ${lines.join('\n  ')}`;
}

describe('enforcement registry', () => {
  const problems = problemsOf(declarations);

  it('declares every field of every place', () => {
    assert.deepEqual(
      problems.undeclared,
      [],
      `fields declared neither enforced nor refused:${listed(problems.undeclared)}`,
    );
  });

  it('declares no field the schema does not have', () => {
    assert.deepEqual(problems.stale, [], `stale declarations:${listed(problems.stale)}`);
  });

  it('names the module of every enforced field, and every module exists', () => {
    assert.deepEqual(problems.withoutModule, [], listed(problems.withoutModule));
    assert.deepEqual(problems.missingModules, [], listed(problems.missingModules));
  });

  it('refuses only values the field can take', () => {
    assert.deepEqual(problems.badRefusedValues, [], listed(problems.badRefusedValues));
  });

  it('lists each leaf of a place once, with a reason for every refusal', () => {
    for (const place of PLACE_NAMES) {
      const paths = leavesOf(place).leaves.map((leaf) => leaf.path);
      assert.deepEqual(
        paths.filter((path, i) => paths.indexOf(path) !== i),
        [],
        place,
      );
      for (const leaf of leavesOf(place).leaves)
        if (leaf.enforcement.kind === 'refused')
          assert.ok(leaf.enforcement.reason.length > 20, `${place} ${leaf.path}`);
    }
  });

  it('states what the data plane refuses today where a user reads it', () => {
    const at = (place: (typeof PLACE_NAMES)[number], path: string) =>
      leavesOf(place).leaves.find((leaf) => leaf.path === path)?.enforcement;
    assert.equal(at('backend:mcp', 'health.eviction')?.kind, undefined, 'a refused field ends the walk');
    assert.equal(at('backend:http', 'tunnel.url')?.kind, 'enforced');
    assert.equal(at('backend:http', 'tunnel.backendRef.namespace')?.kind, 'refused');
    assert.equal(at('backend:http', 'extAuth.failureMode')?.kind, 'enforced');
    assert.equal(at('backend:mcp', 'transformation.request.set.value')?.kind, 'enforced');
    assert.equal(at('backend:ai-provider', 'extAuth.failureMode')?.kind, 'enforced', "a provider's own extAuth");
    assert.equal(at('backend:mcp-target', 'transformation.request.set.value')?.kind, 'enforced');
    assert.equal(at('backend:mcp-target', 'transformation.response')?.kind, 'refused', "a target's response Transform");
    assert.equal(at('backend:mcp', 'health')?.kind, 'refused');
    assert.equal(at('traffic:ai', 'retry')?.kind, 'refused');
    assert.equal(at('traffic', 'retry.attempts')?.kind, 'enforced');
    assert.equal(at('backend:ai', 'auth.cloudone.assumeRole.tags.expression')?.kind, 'enforced');
    const provider = at('model-spec', 'provider');
    assert.ok(provider?.kind === 'enforced');
    assert.equal(provider.refusedValues, undefined, 'every ModelProvider value is served');
  });
});

describe('registry checks find each kind of mistake', () => {
  it('a field declared nowhere, with the type to declare it in', () => {
    const found = problemsOf(withType('Retry', (fields) => delete fields.backoff));
    assert.ok(found.undeclared.includes('traffic: retry.backoff (declare backoff in Retry)'), listed(found.undeclared));
    // Nested unnamed objects are keys of the enclosing named type.
    const nested = problemsOf(withType('McpTarget', (fields) => delete fields['backendRef.name']));
    assert.ok(
      nested.undeclared.includes(
        'backend-spec: mcp.targets.static.backendRef.name (declare backendRef.name in McpTarget)',
      ),
      listed(nested.undeclared),
    );
  });

  it('a declaration of a field the schema does not have', () => {
    const typeStale = problemsOf(withType('Retry', (fields) => (fields.jitter = enforced())));
    assert.deepEqual(typeStale.stale, ['type Retry: jitter is not a field any place reaches']);
    const placeStale = problemsOf({
      types: TYPE_DECLARATIONS,
      places: {
        ...PLACE_DECLARATIONS,
        'traffic:mcp': { ...PLACE_DECLARATIONS['traffic:mcp'], 'retry.jitter': refused('x') },
      },
    });
    assert.deepEqual(placeStale.stale, ['place traffic:mcp: retry.jitter is not a field of it']);
  });

  it('a declaration under a refused field is never read, so it is stale', () => {
    const found = problemsOf(
      withType('BackendFull', (fields) => {
        fields.tunnel = refused('not here');
        fields['tunnel.url'] = enforced();
      }),
    );
    assert.deepEqual(found.stale, ['type BackendFull: tunnel.url is not a field any place reaches']);
  });

  it('an enforced field without a module, and a module that does not exist', () => {
    const without = problemsOf(withType('Traffic', (fields) => (fields.delay = enforced())));
    assert.ok(
      without.withoutModule.includes(
        'traffic: delay.duration (type Delay): neither it nor an enclosing field names a module',
      ),
      listed(without.withoutModule),
    );
    const missing = problemsOf(withType('Traffic', (fields) => (fields.delay = enforced('src/dataplane/nowhere.ts'))));
    assert.deepEqual(missing.missingModules, ['src/dataplane/nowhere.ts does not exist']);
  });

  it('a refused value the field cannot take', () => {
    const found = problemsOf(
      withType(
        'HostnameRewrite',
        (fields) => (fields.mode = enforced(undefined, { refusedValues: { Sometimes: 'x' } })),
      ),
    );
    assert.ok(
      found.badRefusedValues.includes(
        'traffic: hostRewrite.mode (type HostnameRewrite) cannot take the refused value Sometimes',
      ),
      listed(found.badRefusedValues),
    );
  });

  it('a field declared nowhere is refused when a value sets it (fail closed)', () => {
    const walk = new RegistryWalk(withType('Retry', (fields) => delete fields.backoff));
    assert.deepEqual(walk.refusalsIn('traffic', { retry: { attempts: 2, backoff: '1s' } }), [
      { path: 'retry.backoff', reason: UNDECLARED_REASON },
    ]);
  });
});

describe('refusalsIn', () => {
  const paths = (place: (typeof PLACE_NAMES)[number], value: unknown) =>
    refusalsIn(place, value).map((refusal) => refusal.path);

  it('finds nothing in a value of enforced fields', () => {
    assert.deepEqual(
      refusalsIn('backend:http', {
        tcp: { connectTimeout: '1s', keepalive: { time: '10s', interval: '5s', retries: 3 } },
        tls: { sni: 'example.com', keyExchangeGroups: ['X25519'] },
        auth: { secretRef: { name: 'key' } },
        health: { eviction: { duration: '5s' } },
      }),
      [],
    );
    assert.deepEqual(refusalsIn('traffic', { retry: { attempts: 2 }, hostRewrite: { mode: 'None' } }), []);
  });

  it('finds a refused field at the top and nested, with its reason', () => {
    const elsewhere = { backendRef: { name: 'proxy', namespace: 'other' } };
    const [tunnel] = refusalsIn('backend:http', { tunnel: elsewhere });
    assert.equal(tunnel?.path, 'tunnel.backendRef.namespace');
    assert.match(tunnel!.reason, /namespace of the object that holds it/);
    assert.deepEqual(paths('backend:ai', { auth: { cloudone: { region: 'us-east-1' } }, tls: {} }), []);
    assert.deepEqual(
      paths('backend:ai', {
        ai: {
          promptGuard: {
            request: [{ regex: { builtins: ['Ssn'] } }, { zetaGuardrails: { policies: { tunnel: elsewhere } } }],
          },
          prompt: { prepend: [] },
        },
      }),
      ['ai.promptGuard.request[1].zetaGuardrails.policies.tunnel.backendRef.namespace'],
    );
  });

  it('gives list indices in the path', () => {
    const policy = {
      ai: {
        promptGuard: {
          request: [
            { regex: {} },
            { alphaModeration: { policies: { tunnel: { backendRef: { name: 'proxy', namespace: 'other' } } } } },
          ],
        },
      },
    };
    assert.deepEqual(paths('backend:ai', policy), [
      'ai.promptGuard.request[1].alphaModeration.policies.tunnel.backendRef.namespace',
    ]);
    assert.deepEqual(
      paths('backend-spec', {
        ai: { provider: { custom: { formats: [{ type: 'Completions' }, { type: 'Realtime' }] }, host: 'h', port: 1 } },
      }),
      [],
      'every ProviderFormat is served',
    );
  });

  it('finds refused enum values, map values included, with the map key in the path', () => {
    // Every route type is served: a registry that refused one finds it under its path key.
    const routes = { '/v1/chat/completions': 'Completions', '/v1/realtime': 'Realtime', '*': 'Passthrough' };
    assert.deepEqual(paths('backend:ai', { ai: { routes } }), []);
    const walk = new RegistryWalk(
      withType('BackendAI', (fields) => {
        fields.routes = enforced(undefined, { refusedValues: { Realtime: 'not carried here' } });
      }),
    );
    const found = walk.refusalsIn('backend:ai', { ai: { routes } });
    assert.deepEqual(
      found.map((refusal) => refusal.path),
      ['ai.routes["/v1/realtime"]'],
    );
    assert.match(found[0]!.reason, /not carried here/);
    assert.deepEqual(paths('model-spec', { provider: 'Zeta', zeta: { region: 'eu-west-1' } }), []);
    assert.deepEqual(paths('model-spec', { provider: 'Beta', beta: { resourceName: 'r', resourceType: 'Alpha' } }), []);
    assert.deepEqual(paths('backend-spec', { ai: { provider: { custom: { formats: [{ type: 'Rerank' }] } } } }), []);
    assert.deepEqual(paths('model-spec', { provider: 'Alpha', baseURL: 'https://example.com/v1' }), []);
  });

  it('reports only the top-most refused path of a subtree', () => {
    assert.deepEqual(
      paths('backend:mcp', { tunnel: { url: 'http://proxy' }, health: { eviction: { duration: '5s' } } }),
      ['health'],
    );
    assert.deepEqual(paths('model-policies', { tunnel: { url: 'http://proxy:3128' } }), []);
    assert.deepEqual(
      paths('model-policies', {
        promptGuard: {
          request: [
            { regex: { builtins: ['Ssn'] } },
            {
              zetaGuardrails: { identifier: 'g', policies: { tunnel: { backendRef: { name: 'p', namespace: 'o' } } } },
            },
          ],
        },
      }),
      ['promptGuard.request[1].zetaGuardrails.policies.tunnel.backendRef.namespace'],
    );
  });

  it('applies place declarations over the base place and the types', () => {
    const ai = { ai: { routes: { '/v1/messages': 'Messages' } } };
    assert.deepEqual(paths('backend:ai', ai), []);
    assert.deepEqual(paths('backend:ai-provider', ai), ['ai.routes']);
    // backend:mcp-target takes backend:mcp's declarations: health is refused on an mcp backend.
    assert.deepEqual(paths('backend:mcp-target', { health: { unhealthyCondition: 'true' } }), ['health']);
    // A top-level field the place's type does not have (a newer configuration's) is refused.
    assert.deepEqual(paths('backend:http', { newField: {} }), ['newField']);
    assert.deepEqual(paths('traffic', { retry: { attempts: 1 } }), []);
    assert.deepEqual(paths('traffic:mcp', { retry: { attempts: 1 } }), ['retry']);
    // The response side on an AI rule is the response path's, in the conditional form too.
    assert.deepEqual(
      paths('traffic:ai', { transformation: { conditional: [{ policy: { response: { body: 'response.body' } } }] } }),
      [],
    );
  });

  it('ignores fields the schema does not have, unset and null values, and values that are not objects', () => {
    const traffic = {
      apiKeyAuthentication: { secretRef: { name: 'keys' }, selected: ['Secret ns/keys'] },
      retry: null,
    };
    assert.deepEqual(refusalsIn('traffic:ai', traffic), []);
    assert.deepEqual(refusalsIn('backend:http', { tunnel: undefined }), []);
    assert.deepEqual(refusalsIn('backend:http', 'not an object'), []);
    assert.deepEqual(refusalsIn('backend-spec', { ai: { groups: 'not a list' } }), []);
  });
});

describe('docs/enforcement.md', () => {
  it('is current (run npm run docs)', () => {
    let committed = '';
    try {
      committed = readFileSync(join(root, ENFORCEMENT_DOC), 'utf8');
    } catch {
      assert.fail(`${ENFORCEMENT_DOC} is missing; run npm run docs`);
    }
    assert.ok(committed === renderEnforcement(), `${ENFORCEMENT_DOC} differs from the registry; run npm run docs`);
  });

  it('lists every place and every refusal', () => {
    const text = renderEnforcement();
    for (const place of PLACE_NAMES) assert.ok(text.includes(`## \`${place}\``), place);
    assert.ok(text.includes('| `tunnel.backendRef.namespace` | **refused**: An endpoint reference resolves only'));
  });
});

describe('src/contract/enforcement', () => {
  it('imports only src/api, src/util and the contract (a leaf both the controller and the data plane can use)', () => {
    const folder = join(root, 'src/contract/enforcement');
    const outside: string[] = [];
    for (const file of readdirSync(folder).filter((name) => name.endsWith('.ts'))) {
      const text = readFileSync(join(folder, file), 'utf8');
      for (const [, specifier] of text.matchAll(/^(?:import|export)[^'"]*from '([^']+)'/gm)) {
        const allowed =
          specifier!.startsWith('node:') ||
          specifier!.startsWith('./') ||
          specifier! === '../dataplane-config.ts' ||
          specifier!.startsWith('../../api/') ||
          specifier!.startsWith('../../util/');
        if (!allowed) outside.push(`${file}: ${specifier}`);
      }
    }
    assert.deepEqual(outside, []);
  });
});
