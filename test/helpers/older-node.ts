// The machine's own Node when it is older than the Node 24 gw runs on (Debian's nodejs package, or
// another install at /usr/bin/node), for the tests of bin/gw.js re-running itself on the pinned
// Node 24 when an older Node starts it.
import { spawnSync } from 'node:child_process';
import { skipWithoutTool } from './missing-tool.ts';

export const OLDER_NODE = '/usr/bin/node';

function olderNodeProblem(): string | undefined {
  const result = spawnSync(OLDER_NODE, ['-p', 'process.versions.node'], { encoding: 'utf8' });
  if (result.error) return `${OLDER_NODE} does not run (${result.error.message}); apt-get install nodejs`;
  const version = result.stdout.trim();
  if (Number(version.split('.')[0]) >= 24) return `${OLDER_NODE} is Node ${version}, not older than 24`;
  return undefined;
}

let skip: string | false | undefined;

/** The skip option of a test that starts gw with the older Node (false when it can run); checked once a file. */
export function skipWithoutOlderNode(): string | false {
  skip ??= skipWithoutTool('an older Node', olderNodeProblem());
  return skip;
}
