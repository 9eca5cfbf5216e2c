// gw's own version: the package's, as `gw --version` prints it and the API server's /version
// reports it.
import { readFileSync } from 'node:fs';

export function gwVersion(): string {
  try {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return manifest.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}
