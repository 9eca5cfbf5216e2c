// Objects of a kind served in more than one version (ReferenceGrant: v1beta1 and v1) are stored
// in one, the kind's stored version, and converted on the way in and out, as kube-apiserver
// converts custom resources. The versions gw serves share one schema, so converting is setting
// apiVersion; everything else of the object is the same in every version.
import type { KubeObject } from '../api/validate/admission.ts';
import type { ApiResource } from './resources.ts';

/** Converts a decoded request object (of `resource`'s version) in place to the stored version. */
export function toStoredVersion(resource: ApiResource, object: KubeObject): void {
  object.apiVersion = resource.storageApiVersion;
}

/** A stored object as a client of `resource`'s version sees it (the object itself when no conversion is needed). */
export function toServedVersion(resource: ApiResource, object: KubeObject): KubeObject {
  return object.apiVersion === resource.apiVersion ? object : { ...object, apiVersion: resource.apiVersion };
}

/** The JSON text of a stored object in `resource`'s version; `text` itself when no conversion is needed. */
export function servedText(resource: ApiResource, object: KubeObject, text: string): string {
  return object.apiVersion === resource.apiVersion ? text : JSON.stringify(toServedVersion(resource, object));
}
