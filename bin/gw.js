#!/usr/bin/env node
// The gw command. gw runs on Node 24; when started by another Node (a system's older one), it
// re-runs itself on the Node 24 that the package depends on (the `node` package of the npm
// registry, found as an import of gw's would be: beside gw in node_modules or in its own). In a
// checkout it runs its TypeScript sources directly; the npm package ships them built to JavaScript
// (dist/, scripts/build-package.ts), since Node does not strip types under node_modules.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const major = Number(process.versions.node.split('.')[0]);
const sourceMain = join(packageRoot, 'src', 'cli', 'main.ts');
const cliMain = existsSync(sourceMain) ? sourceMain : join(packageRoot, 'dist', 'cli', 'main.js');

/** The pinned Node 24's executable, or undefined when gw's dependencies are not installed. */
function pinnedNode() {
  try {
    const manifest = nodeModule.createRequire(import.meta.url).resolve('node/package.json');
    const executable = join(dirname(manifest), 'bin', 'node');
    return existsSync(executable) ? executable : undefined;
  } catch {
    return undefined;
  }
}

// A closed pipe (gw crds | head) ends the output quietly instead of with a stack trace.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

// `gw run` serves traffic: it starts with V8 heap settings for a process whose garbage is nearly all
// short-lived (V8 reads them only at start, so the process replaces itself once with the flags
// added; cluster workers inherit them). A young generation of 8 MiB semi-spaces instead of up to
// 64 MiB; and after each full collection the old generation may grow by half its live size before
// the next, instead of up to four times: without it, the little a busy gateway promotes piles up
// for minutes before V8 collects it (docs/benchmarks.md, "Memory"). An option the user gave Node
// (on its command line or in NODE_OPTIONS) is kept.
const RUN_NODE_FLAGS = ['--max-semi-space-size=8', '--heap-growing-percent=50'];
const optionName = (flag) => flag.split('=')[0].replaceAll('_', '-');
const givenNodeOptions = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].map(optionName);
const addedRunFlags = RUN_NODE_FLAGS.filter((flag) => !givenNodeOptions.includes(optionName(flag)));
// glibc gives each thread that allocates (V8's GC and compiler helpers, libuv's pool) its own
// malloc arena of up to 64 MiB; one shared arena keeps 15-20 MiB less resident under load at no
// measurable CPU cost (gw's JavaScript runs on one thread). And glibc maps an allocation of 128 KiB
// or more on its own (unmapped when freed) only until the first such one is freed, after which it
// raises that threshold to the freed size: later request bodies of that size would come from the
// heap, whose freed memory is not given back, so an attack of large stalled bodies would leave
// gw's memory high after it ends. A fixed threshold keeps large buffers unmapped on free
// (docs/security.md). Values the user set are kept.
const RUN_ENV = Object.fromEntries(
  Object.entries({ MALLOC_ARENA_MAX: '1', MALLOC_MMAP_THRESHOLD_: '131072' }).filter(
    ([name]) => process.env[name] === undefined,
  ),
);
const command = process.argv[2];
const wantsRunFlags = command === 'run' && (addedRunFlags.length > 0 || Object.keys(RUN_ENV).length > 0);

if (major === 24 && wantsRunFlags && typeof process.execve === 'function') {
  process.execve(
    process.execPath,
    [process.execPath, ...process.execArgv, ...addedRunFlags, ...process.argv.slice(1)],
    { ...process.env, ...RUN_ENV },
  );
} else if (major === 24) {
  // Node keeps the type-stripped, compiled sources in its compile cache (in the temporary
  // directory): later starts skip type stripping, which saves time and about 25 MiB of memory
  // (the stripper's WebAssembly heap is never given back). Flushed once gw's modules are loaded,
  // so that a long-running `gw run` that is killed has still written it.
  nodeModule.enableCompileCache();
  const { main } = await import(pathToFileURL(cliMain).href);
  nodeModule.flushCompileCache();
  process.exitCode = await main(process.argv.slice(2));
} else {
  const pinned = pinnedNode();
  if (pinned === undefined) {
    process.stderr.write(
      `gw needs Node 24 (this is Node ${process.versions.node}) and did not find the Node 24 it depends on ` +
        `(the npm package "node", whose install script fetches it) from ${packageRoot}: run "npm install" there ` +
        'in a checkout, reinstall gw with install scripts allowed, or start gw with Node 24.\n',
    );
    process.exit(2);
  }
  const child = spawn(
    pinned,
    [...(command === 'run' ? addedRunFlags : []), fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    { stdio: 'inherit', env: command === 'run' ? { ...process.env, ...RUN_ENV } : process.env },
  );
  // A signal sent to this process alone (kill, a service manager) is passed on, so that gw stops
  // gracefully instead of being orphaned. Ctrl-C reaches both processes through the terminal's
  // process group, so SIGINT is only kept from ending this one before gw has stopped.
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  process.on('SIGINT', () => {});
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 0)));
}
