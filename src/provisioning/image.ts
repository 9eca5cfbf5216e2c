// The data plane's container image from GwParameters' image field. The default is the name gw's
// release image is to have, ghcr.io/gw-dev/gw at gw's own version: the image the Dockerfile
// builds (none is published yet), whose entry point `gw` the container command starts with.
import type { Image } from '../api/types/provisioning.ts';

export const DEFAULT_IMAGE_REGISTRY = 'ghcr.io';
export const DEFAULT_IMAGE_REPOSITORY = 'gw-dev/gw';

/** `registry/repository@digest` when a digest is given (it pins the image, the tag is not used), else `:tag`. */
export function imageReference(image: Image, version: string): string {
  const name = `${image.registry ?? DEFAULT_IMAGE_REGISTRY}/${image.repository ?? DEFAULT_IMAGE_REPOSITORY}`;
  if (image.digest !== undefined) return `${name}@${image.digest}`;
  return `${name}:${image.tag ?? version}`;
}
