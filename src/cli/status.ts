// gw status -f DIR | --kubeconfig FILE: every object's conditions, as the controller would write
// them for the files, or as a running controller wrote them on the API server.
import { parseArgs } from 'node:util';
import type { Condition } from '../api/kinds/gateway-api/shared.ts';
import { type ObjectStatus, objectStatuses, refText } from '../controller/status-report.ts';
import { argsErrorText } from './args.ts';
import type { Io } from './io.ts';
import { WORLD_OPTIONS, WORLD_USAGE, type World, worldOf } from './world.ts';

function conditionLines(conditions: readonly Condition[], indent: string): string[] {
  return conditions.map((c) => `${indent}${c.type}=${c.status} (${c.reason}): ${c.message}`);
}

/** The lines describing one object's status: its own conditions, then per listener/parent/ancestor. */
function statusLines(status: ObjectStatus, noStatus: string): string[] {
  if (!status.hasStatus) return [noStatus];
  const lines = conditionLines(status.conditions, '  ');
  for (const listener of status.listeners) {
    lines.push(`  listener ${listener.name} (${listener.attachedRoutes} routes):`);
    lines.push(...conditionLines(listener.conditions, '    '));
  }
  for (const relation of status.relations) {
    lines.push(`  ${relation.role} ${refText(relation.ref)}:`);
    lines.push(...conditionLines(relation.conditions, '    '));
  }
  return lines;
}

export const STATUS_USAGE = `usage: gw status -f FILE|DIR [-f ...] [-R]
       gw status --kubeconfig FILE [--context NAME]
  Every object's conditions (Accepted, Programmed, ResolvedRefs...; per listener, parent and
  ancestor): as gw's controller writes them for these files, or as the controller of a running
  gw (or gw controller) wrote them on its API server — with what only a running gw knows, such
  as a listener port it cannot bind.
${WORLD_USAGE}`;

export async function statusCommand(args: string[], io: Io): Promise<number> {
  let values: { filename?: string[]; recursive?: boolean; kubeconfig?: string; context?: string };
  try {
    values = parseArgs({ args, options: WORLD_OPTIONS }).values;
  } catch (error) {
    io.stderr(`gw status: ${argsErrorText(error, WORLD_OPTIONS)}\n${STATUS_USAGE}`);
    return 2;
  }
  const world = await worldOf(values);
  if ('error' in world) {
    io.stderr(`gw status: ${world.error}\n${world.usage ? STATUS_USAGE : ''}`);
    return world.usage ? 2 : 1;
  }
  try {
    return report(world, io);
  } finally {
    await world.close();
  }
}

function report(world: World, io: Io): number {
  for (const problem of world.problems) io.stderr(`${problem.message}\n`);
  const noStatus = world.storedStatuses
    ? '  (no status: not handled by gw, or no gw controller writes to this API server)'
    : '  (no status: not handled by gw)';
  const out: string[] = [];
  for (const status of objectStatuses(world.store)) {
    out.push(`${status.kind} ${status.namespace ? `${status.namespace}/` : ''}${status.name}`);
    out.push(...statusLines(status, noStatus));
  }
  io.stdout(`${out.join('\n')}\n`);
  return world.problems.length > 0 ? 1 : 0;
}
