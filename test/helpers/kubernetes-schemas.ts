// Checks an object against the Kubernetes OpenAPI schema of its kind, with the validators the
// kubernetes-models package compiles from Kubernetes' own OpenAPI documents: wrong types, missing
// required fields, values out of an enum — and fields the schema does not have, which the
// validators accept but kube-apiserver refuses (kubectl's strict field validation). Unknown fields
// are found by watching which fields the validator reads: it looks up every field its schema
// declares (present or not), and every key of a map, so in an object whose fields it looks up at
// all, a field it never reads is one the schema does not have.
import { isPlainObject } from '../../src/util/values.ts';

/** The kubernetes-models module name of each apiVersion's kinds (`_schemas/<prefix><Kind>`). */
const SCHEMA_PREFIXES: Record<string, string> = {
  v1: 'IoK8sApiCoreV1',
  'apps/v1': 'IoK8sApiAppsV1',
  'policy/v1': 'IoK8sApiPolicyV1',
  'autoscaling/v2': 'IoK8sApiAutoscalingV2',
  'rbac.authorization.k8s.io/v1': 'IoK8sApiRbacV1',
  'apiextensions.k8s.io/v1': 'IoK8sApiextensionsApiserverPkgApisApiextensionsV1',
};

/** The model class's module: `kubernetes-models/apps/v1/Deployment`, `kubernetes-models/v1/Service`. */
const modelModule = (apiVersion: string, kind: string) => `kubernetes-models/${apiVersion}/${kind}`;

type SchemaValidate = ((data: unknown) => boolean) & { errors?: unknown[] | null };

/** Whether the kind is one kubernetes-models knows (the Kubernetes kinds gw writes). */
export function isKubernetesKind(object: { apiVersion?: unknown }): boolean {
  return typeof object.apiVersion === 'string' && object.apiVersion in SCHEMA_PREFIXES;
}

/**
 * Fields kubernetes-models' generator strips from every schema it compiles, together with the
 * schema keywords of the same names: `description` and the `x-kubernetes-*` extensions. Its
 * validators therefore never read the fields of those names that Kubernetes' schemas do have (a
 * CRD's schema nodes and printer columns carry them), so they are not reported as unknown.
 */
const STRIPPED_BY_KUBERNETES_MODELS = (key: string) => key === 'description' || key.startsWith('x-kubernetes-');

/** The fields of `value` the validator never read, as JSON paths. */
function unread(value: unknown, read: WeakMap<object, Set<string>>, path: string): string[] {
  if (Array.isArray(value)) return value.flatMap((item, i) => unread(item, read, `${path}[${i}]`));
  if (!isPlainObject(value)) return [];
  // Not one field looked up: the schema leaves this value free-form (a CRD's `items`, `default`).
  const seen = read.get(value);
  if (seen === undefined || seen.size === 0) return [];
  return Object.entries(value).flatMap(([key, child]) => {
    if (seen.has(key)) return unread(child, read, `${path}.${key}`);
    return STRIPPED_BY_KUBERNETES_MODELS(key) ? [] : [`${path}.${key}`];
  });
}

/**
 * Problems of `object` against its kind's schema: the model's validation errors, then each field
 * the schema does not have ("unknown field .spec.x"). Empty when kube-apiserver would accept it.
 */
export async function kubernetesSchemaProblems(object: Record<string, unknown>): Promise<string[]> {
  const apiVersion = object.apiVersion as string;
  const kind = object.kind as string;
  const prefix = SCHEMA_PREFIXES[apiVersion];
  if (prefix === undefined) throw new Error(`no Kubernetes schema for ${apiVersion} ${kind}`);
  const problems: string[] = [];
  const { [kind]: Model } = (await import(modelModule(apiVersion, kind))) as Record<
    string,
    new (
      data: unknown,
    ) => { validate(): void }
  >;
  try {
    new Model!(structuredClone(object)).validate();
  } catch (error) {
    problems.push((error as Error).message);
  }
  const { validate } = (await import(`kubernetes-models/_schemas/${prefix}${kind}`)) as { validate: SchemaValidate };
  const read = new WeakMap<object, Set<string>>();
  const proxies = new WeakMap<object, object>();
  const watched = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object') return value;
    const known = proxies.get(value);
    if (known) return known;
    read.set(value, new Set());
    const proxy = new Proxy(value, {
      get(target, key, receiver) {
        if (typeof key === 'string') read.get(target)!.add(key);
        return watched(Reflect.get(target, key, receiver));
      },
    });
    proxies.set(value, proxy);
    return proxy;
  };
  const copy = structuredClone(object);
  validate(watched(copy));
  for (const field of unread(copy, read, '')) problems.push(`unknown field ${field}`);
  return problems;
}
