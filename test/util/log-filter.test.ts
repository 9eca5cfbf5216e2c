// The log filter's syntax (RUST_LOG's per-module directives) and what it lets through: levels,
// modules nested with ::, the most specific directive winning, and clear errors for a module or a
// level gw does not know.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LOG_MODULES, LogFilter, parseLogLevel } from '../../src/util/log-filter.ts';
import { lineLogger } from '../../src/util/log-line.ts';

function filter(text: string): LogFilter {
  const parsed = LogFilter.parse(text);
  assert.ok(parsed instanceof LogFilter, String(parsed));
  return parsed;
}

describe('LogFilter', () => {
  it('a bare level applies to every module; info is the default', () => {
    const info = filter('info');
    assert.equal(info.enabled('run', 'info'), true);
    assert.equal(info.enabled('run', 'debug'), false);
    assert.equal(info.enabled('dataplane::failures', 'error'), true);
    const warn = filter('WARN');
    assert.equal(warn.enabled('kube', 'info'), false);
    assert.equal(warn.enabled('kube', 'warn'), true);
    const off = filter('off');
    for (const module of Object.keys(LOG_MODULES)) assert.equal(off.enabled(module, 'error'), false);
    assert.equal(filter('trace').enabled('controller', 'debug'), true);
  });

  it('a module directive covers the modules under it; the most specific wins; the rest keep the bare level', () => {
    const mixed = filter('warn,dataplane=debug,dataplane::failures=off');
    assert.equal(mixed.enabled('run', 'info'), false);
    assert.equal(mixed.enabled('run', 'warn'), true);
    assert.equal(mixed.enabled('dataplane', 'debug'), true);
    assert.equal(mixed.enabled('dataplane::credentials', 'debug'), true, 'inherits dataplane');
    assert.equal(mixed.enabled('dataplane::failures', 'error'), false);
    const onlyModule = filter('kube=debug');
    assert.equal(onlyModule.enabled('kube', 'debug'), true);
    assert.equal(onlyModule.enabled('run', 'info'), true, 'no bare level: info');
    assert.equal(onlyModule.enabled('run', 'debug'), false);
    assert.equal(filter('run').enabled('run', 'debug'), true, 'a module alone: everything it says');
    assert.equal(filter(' warn , run = debug ,').enabled('run', 'debug'), true, 'spaces and empty directives');
  });

  it('errors name the directive and what gw knows', () => {
    assert.equal(
      LogFilter.parse('warn,mcp=debug'),
      `"mcp=debug": unknown module "mcp" (gw's modules: run, run::workers, controller, kube, apiserver, dataplane, dataplane::failures, dataplane::credentials)`,
    );
    assert.equal(
      LogFilter.parse('run=verbose'),
      '"run=verbose": unknown level "verbose" (levels: trace, debug, info, warn, error, off)',
    );
    assert.match(String(LogFilter.parse('loud')), /^"loud" is neither a level nor a module/);
    assert.match(String(LogFilter.parse('info/serving')), /message filters \(\/regex\) are not supported/);
    assert.match(String(LogFilter.parse('')), /is empty/);
    assert.deepEqual(parseLogLevel('x=1'), {
      problem: `--log-level "x=1": unknown module "x" (gw's modules: ${Object.keys(LOG_MODULES).join(', ')})`,
    });
  });

  it('a lineLogger drops what its filter does not let through, and its modules share the filter', () => {
    const lines: string[] = [];
    const log = lineLogger('text', 'run', (text) => lines.push(text), filter('warn,dataplane=debug'), { pid: 7 });
    log('dropped');
    log('kept', 'warn');
    log.module?.('dataplane')('also kept', 'debug');
    log.module?.('kube')('dropped too');
    assert.equal(lines.length, 2);
    assert.match(lines[0]!, / WARN {2}run: kept pid=7\n$/);
    assert.match(lines[1]!, / DEBUG dataplane: also kept pid=7\n$/);
  });
});
