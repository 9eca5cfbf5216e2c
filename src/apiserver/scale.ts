// The scale subresource (autoscaling/v1 Scale) of the kinds that have one (Deployment): the view
// of an object kubectl scale, kubectl autoscale and autoscalers read and write — spec.replicas,
// status.replicas and the selector as a string. A write of a Scale changes only spec.replicas.
import type { KubeObject } from '../api/validate/admission.ts';
import { isPlainObject } from '../util/values.ts';
import { badRequest, invalid } from './errors.ts';
import type { ApiResource } from './resources.ts';
import { SCALE_KIND } from './resources.ts';
import { formatLabelSelector } from './selectors.ts';

/** The Scale of an object. */
export function scaleOf(object: KubeObject): KubeObject {
  const spec = isPlainObject(object.spec) ? object.spec : {};
  const status = isPlainObject(object.status) ? object.status : {};
  const { name, namespace, uid, resourceVersion, creationTimestamp } = object.metadata;
  return {
    apiVersion: `${SCALE_KIND.group}/${SCALE_KIND.version}`,
    kind: SCALE_KIND.kind,
    metadata: { name, namespace, uid, resourceVersion, creationTimestamp },
    spec: { replicas: typeof spec.replicas === 'number' ? spec.replicas : 0 },
    status: {
      replicas: typeof status.replicas === 'number' ? status.replicas : 0,
      selector: formatLabelSelector(spec.selector),
    },
  };
}

/**
 * The object with the replicas a written Scale asks for, its resourceVersion (a precondition when
 * set) carried over; a Scale naming another object, or replicas that are not a count, is refused.
 */
export function withScale(resource: ApiResource, object: KubeObject, body: unknown): KubeObject {
  if (!isPlainObject(body)) throw badRequest('a Scale must be a JSON object');
  const name = object.metadata.name!;
  const metadata = isPlainObject(body.metadata) ? body.metadata : {};
  if (metadata.name !== undefined && metadata.name !== name) {
    throw badRequest(
      `the name of the Scale (${String(metadata.name)}) does not match the name of the object (${name})`,
    );
  }
  const replicas = isPlainObject(body.spec) ? body.spec.replicas : undefined;
  if (
    replicas !== undefined &&
    (!Number.isInteger(replicas) || (replicas as number) < 0 || (replicas as number) > 2 ** 31 - 1)
  ) {
    throw invalid(resource, name, [
      {
        type: 'Invalid',
        field: 'spec.replicas',
        value: JSON.stringify(replicas),
        detail: 'must be greater than or equal to 0',
      },
    ]);
  }
  const next = structuredClone(object) as KubeObject;
  next.spec = { ...(isPlainObject(object.spec) ? object.spec : {}), replicas: replicas ?? 0 };
  const requested = metadata.resourceVersion;
  if (typeof requested === 'string' && requested !== '') next.metadata.resourceVersion = requested;
  return next;
}
