// gw explain -f DIR route NS/NAME[/RULE] | backend NS/NAME[/SECTION]: the effective frontend,
// traffic and backend policy at an attachment point, field by field, each with the object that
// set it and the objects it overrode, and a backend authentication whose Secret lacks what it reads
// (computed by controller/policies/explanation.ts, which the web UI shows too; printed here).
import { parseArgs } from 'node:util';
import { type ExplainedSection, type ExplainTarget, explain } from '../controller/policies/explanation.ts';
import type { Provenance } from '../controller/policies/merge.ts';
import { snapshotFromStore } from '../controller/snapshot.ts';
import { argsErrorText } from './args.ts';
import type { Io } from './io.ts';
import { WORLD_OPTIONS, WORLD_USAGE, type World, worldOf } from './world.ts';

function provenanceText(p: Provenance): string {
  return `${p.source} (${p.level}, on ${p.target})`;
}

/** A section field by field: its value, who set it, whom it overrode, and a refusal or missing Secret. */
function sectionLines(section: ExplainedSection): string[] {
  if (section.fields.length === 0) return [`${section.title}: nothing set`];
  const lines = [`${section.title}:`];
  for (const field of section.fields) {
    lines.push(`  ${field.field}: ${JSON.stringify(field.value)}`);
    lines.push(`    set by ${provenanceText(field.setBy)}`);
    for (const overridden of field.overrides) lines.push(`    overrides ${provenanceText(overridden)}`);
    for (const refusal of field.refused)
      lines.push(
        `    REFUSED by the data plane (the traffic it covers is answered 500): ${refusal.path}: ${refusal.reason}`,
      );
    for (const problem of field.unresolved)
      lines.push(`    UNRESOLVED (InvalidCredentialRef; the traffic it covers is answered 500): ${problem}`);
  }
  return lines;
}

function parseTarget(text: string | undefined): ExplainTarget | undefined {
  if (!text) return undefined;
  const parts = text.split('/');
  if (parts.length < 2 || parts.length > 3 || parts.some((p) => p === '')) return undefined;
  return { namespace: parts[0]!, name: parts[1]!, section: parts[2] };
}

export const EXPLAIN_USAGE = `usage: gw explain (-f FILE|DIR [-f ...] [-R] | --kubeconfig FILE [--context NAME]) route NAMESPACE/NAME[/RULE]
       gw explain (-f FILE|DIR [-f ...] [-R] | --kubeconfig FILE [--context NAME]) backend NAMESPACE/NAME[/SECTION]
  The effective frontend, traffic and backend policy at a route (or one rule of it) or a backend
  (or one section: a GwBackend's target, a Service's port), field by field: its value, the object
  that set it, what it overrode, and whether the data plane refuses it there; from files, or from
  the objects on an API server (a cluster, or a running gw's).
${WORLD_USAGE}`;

export async function explainCommand(args: string[], io: Io): Promise<number> {
  let parsed: {
    values: { filename?: string[]; recursive?: boolean; kubeconfig?: string; context?: string };
    positionals: string[];
  };
  try {
    parsed = parseArgs({ args, options: WORLD_OPTIONS, allowPositionals: true });
  } catch (error) {
    io.stderr(`gw explain: ${argsErrorText(error, WORLD_OPTIONS)}\n${EXPLAIN_USAGE}`);
    return 2;
  }
  const [what, targetText] = parsed.positionals;
  const target = parseTarget(targetText);
  if ((what !== 'route' && what !== 'backend') || !target) {
    io.stderr(EXPLAIN_USAGE);
    return 2;
  }
  const world = await worldOf(parsed.values);
  if ('error' in world) {
    io.stderr(`gw explain: ${world.error}\n${world.usage ? EXPLAIN_USAGE : ''}`);
    return world.usage ? 2 : 1;
  }
  try {
    return report(world, what, target, io);
  } finally {
    await world.close();
  }
}

function report(world: World, what: 'route' | 'backend', target: ExplainTarget, io: Io): number {
  for (const problem of world.problems) io.stderr(`${problem.message}\n`);
  const snapshot = snapshotFromStore(world.store);
  const explanation = explain(
    { snapshot, listeners: world.report.gatewayApi.listeners, where: world.where },
    what,
    target,
  );
  if ('problem' in explanation) {
    io.stderr(`gw explain: ${explanation.problem}\n`);
    return 1;
  }
  const out: string[] = [];
  if (explanation.what === 'route') {
    if (explanation.placements.length === 0)
      out.push(`HTTPRoute ${explanation.key} is not attached to any gw Gateway (see gw status).`);
    for (const placement of explanation.placements)
      out.push(placement.heading, ...placement.sections.flatMap(sectionLines), '');
  } else {
    explanation.sections.forEach((section, i) => {
      out.push(...(i > 0 ? [''] : []), ...sectionLines(section));
    });
  }
  io.stdout(`${out.join('\n')}\n`);
  return 0;
}
