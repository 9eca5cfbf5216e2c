// @kubernetes/client-node, loaded on first use. It is large (about 30 MiB resident once loaded,
// with its generated models and dependencies), and `gw run` on files or on the embedded API
// server never needs it. Node 24 loads an ES module with require() synchronously.
import { createRequire } from 'node:module';
import type * as ClientNode from '@kubernetes/client-node';

let loaded: typeof ClientNode | undefined;

export function clientNode(): typeof ClientNode {
  loaded ??= createRequire(import.meta.url)('@kubernetes/client-node') as typeof ClientNode;
  return loaded;
}
