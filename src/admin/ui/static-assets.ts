// The UI's files, read once when the UI starts: the pages' ES modules, the stylesheet and the
// shell (index.html) from assets/ beside this file (copied into the package as they are), and the
// front-end libraries from the installed preact and htm packages, which the shell's import map
// names. Nothing is fetched from elsewhere at run time. The Content-Security-Policy allows scripts
// from this origin and the import map by its hash, nothing inline besides.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Asset {
  body: Buffer;
  contentType: string;
  etag: string;
}

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** The libraries the import map names, by the URL path the browser loads them from. */
const VENDOR_MODULES: Record<string, string> = {
  '/ui/vendor/preact.mjs': 'preact',
  '/ui/vendor/hooks.mjs': 'preact/hooks',
  '/ui/vendor/htm.mjs': 'htm',
};

export const ASSETS_DIR = join(import.meta.dirname, 'assets');

function asset(body: Buffer, path: string): Asset {
  return {
    body,
    contentType: CONTENT_TYPES[extname(path)] ?? 'application/octet-stream',
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
  };
}

export interface StaticAssets {
  /** Files by URL path (/ui/assets/app.js, /ui/vendor/preact.mjs). */
  files: ReadonlyMap<string, Asset>;
  /** The shell every page path answers with. */
  shell: Asset;
  /** The Content-Security-Policy of every UI answer. */
  contentSecurityPolicy: string;
}

export function loadStaticAssets(): StaticAssets {
  const files = new Map<string, Asset>();
  for (const entry of readdirSync(ASSETS_DIR, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const ext = extname(path);
    if (!(ext in CONTENT_TYPES) || entry.name === 'index.html') continue;
    files.set(`/ui/assets/${relative(ASSETS_DIR, path).split(sep).join('/')}`, asset(readFileSync(path), path));
  }
  for (const [urlPath, specifier] of Object.entries(VENDOR_MODULES)) {
    const file = fileURLToPath(import.meta.resolve(specifier));
    files.set(urlPath, asset(readFileSync(file), urlPath));
  }
  const html = readFileSync(join(ASSETS_DIR, 'index.html'), 'utf8');
  const importMap = /<script type="importmap">([\s\S]*?)<\/script>/.exec(html)?.[1];
  if (importMap === undefined) throw new Error(`${join(ASSETS_DIR, 'index.html')} has no import map`);
  const importMapHash = createHash('sha256').update(importMap).digest('base64');
  const contentSecurityPolicy = [
    "default-src 'none'",
    `script-src 'self' 'sha256-${importMapHash}'`,
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { files, shell: asset(Buffer.from(html), 'index.html'), contentSecurityPolicy };
}
