// The threatcol version, from package.json: the one place it comes from (npm and the Debian package build both
// read it), for `--version` and for what names this version to others (the syslog CEF header).
import { readFileSync } from 'node:fs';

/** package.json sits one level up from both src/ (tsx) and dist/ (the compiled CLI). */
const PACKAGE_JSON = new URL('../package.json', import.meta.url);

export function threatcolVersion(): string {
  const pkg = JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version?: unknown };
  if (typeof pkg.version !== 'string') throw new Error(`${PACKAGE_JSON.pathname} has no version`);
  return pkg.version;
}
