// The URL of a module beside the calling one, for the few files gw starts by path (a worker
// thread, node:cluster's worker processes). A path is not an import, so nothing rewrites its
// extension: gw runs its .ts sources in a checkout and the .js files built into the npm package
// (scripts/build-package.ts), and the sibling has the extension the caller has.
import { extname } from 'node:path';

/** The URL of `name` (without extension) in the folder of the module whose URL is `callerUrl`. */
export function siblingModule(callerUrl: string, name: string): URL {
  return new URL(`./${name}${extname(new URL(callerUrl).pathname)}`, callerUrl);
}
