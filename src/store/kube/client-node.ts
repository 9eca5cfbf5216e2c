// @kubernetes/client-node, loaded on first use. It is large (about 30 MiB resident once loaded,
// with its generated models and dependencies), and `gw run` on files or on the embedded API
// server never needs it.
import type * as ClientNode from '@kubernetes/client-node';
import { loadOnFirstUse } from '../../util/load-on-first-use.ts';

export const clientNode = loadOnFirstUse<typeof ClientNode>('@kubernetes/client-node');
