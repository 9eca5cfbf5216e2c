// Builds the JavaScript that the npm package ships (npm's prepack runs it; postpack removes dist/).
// Node refuses to strip the types of .ts files under node_modules, so an installed gw cannot run
// its sources as a checkout does: tsc type-checks src/ and writes it to dist/ as JavaScript, the
// same tree (dist/cli/main.js for src/cli/main.ts, so that paths relative to a module, such as
// ../../package.json, still hold) with relative imports rewritten from .ts to .js. The files
// that are not TypeScript (the gRPC .proto definitions) are copied beside them. A module that
// still names a .ts file after the build would fail only when installed, so the build fails.
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';

const packageRoot = join(import.meta.dirname, '..');
const source = join(packageRoot, 'src');
const output = join(packageRoot, 'dist');

rmSync(output, { recursive: true, force: true });
const tsc = join(packageRoot, 'node_modules', 'typescript', 'bin', 'tsc');
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: packageRoot, stdio: 'inherit' });
cpSync(source, output, { recursive: true, filter: (path) => !path.endsWith('.ts') });

// An import or a sibling module's path that names a .ts file (a relative specifier ending .ts).
const namesTypeScript = /(?:from\s+|import\s*\(\s*|\brequire\s*\(\s*)['"]\.{1,2}\/[^'"]*\.ts['"]/;
const offending: string[] = [];
for (const entry of readdirSync(output, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.js')) continue;
  const path = join(entry.parentPath, entry.name);
  if (namesTypeScript.test(readFileSync(path, 'utf8'))) offending.push(relative(packageRoot, path));
}
if (offending.length > 0) {
  process.stderr.write(`build-package: these built modules still import .ts files:\n  ${offending.join('\n  ')}\n`);
  process.exit(1);
}
process.stdout.write(`build-package: wrote ${relative(packageRoot, output)}/\n`);
