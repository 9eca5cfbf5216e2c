// What `gw run` says about its configuration, one line per event: the first load, every reload
// that changed something (and a reload that fixed the problems reported before), the problems of
// a file that keeps its last good objects serving, and per Gateway the listeners served — and
// those whose port cannot be bound, which are not served.
import type { ConfigUpdate } from '../controller/controller.ts';
import type { UnboundPort } from '../dataplane/server/data-plane.ts';
import type { LoadReport } from '../store/file-store.ts';
import type { LogFunction } from '../util/log-line.ts';

/** Told about every load of the files; logs what changed since the last one. */
export function loadReporter(log: LogFunction): (report: LoadReport) => void {
  let loads = 0;
  let lastText = '';
  let hadProblems = false;
  return (report) => {
    loads++;
    const problems = report.problems.map((problem) => problem.message).join('\n');
    const warnings = report.warnings.map((warning) => warning.message).join('\n');
    const notServed = report.notServed.map((entry) => entry.message).join('\n');
    // Problems or warnings the log already said are not said again at each reload.
    const text = `${problems}\n${warnings}\n${notServed}`;
    const repeated = text === lastText;
    lastText = text;
    if (problems) {
      hadProblems = true;
      if (!repeated) log(`configuration problems (the last good objects keep serving):\n${problems}`, 'warn');
      return;
    }
    if (warnings && !repeated)
      log(`configuration warnings (the objects are served without these fields):\n${warnings}`, 'warn');
    if (notServed && !repeated) log(`objects not served (kinds gw does not read):\n${notServed}`, 'warn');
    const objects = `${report.objects} object${report.objects === 1 ? '' : 's'}`;
    if (loads === 1) {
      log(`configuration loaded: ${objects}`);
    } else if (hadProblems || report.filesChanged > 0) {
      const fixed = hadProblems ? '; the problems reported before are fixed' : '';
      log(`configuration reloaded: ${objects}, ${report.changes} changed${fixed}`);
    }
    hadProblems = false;
  };
}

/** Told after the data plane applied an update; logs each changed Gateway's listeners, served or not. */
export function applyReporter(
  log: LogFunction,
): (update: ConfigUpdate, unbound: ReadonlyMap<number, UnboundPort>) => void {
  return (update, unbound) => {
    log(
      `configuration update (${update.pass} pass, ${Math.round(update.durationMs)} ms): ${update.changed.size} changed, ${update.removed.length} removed`,
      'debug',
      { changed: [...update.changed.keys()].join(' ') || undefined, removed: update.removed.join(' ') || undefined },
    );
    for (const [key, config] of update.changed) {
      const served: string[] = [];
      const notServed: string[] = [];
      for (const listener of config.listeners) {
        const name = `${listener.name} ${listener.protocol} :${listener.port}`;
        const failure = unbound.get(listener.port);
        if (failure) notServed.push(name);
        else served.push(name);
      }
      if (config.listeners.length === 0) log(`Gateway ${key}: serving no listeners`);
      else if (served.length > 0) log(`Gateway ${key}: serving ${served.join(', ')}`);
      if (notServed.length > 0)
        log(
          `Gateway ${key}: NOT serving ${notServed.join(', ')}: ${notServed.length === 1 ? 'its port' : 'their ports'} cannot be bound (said above)`,
          'error',
        );
    }
    for (const key of update.removed) log(`Gateway ${key}: no longer served`);
  };
}
