// The command line: answers `--version` at once, else runs argv through the command tree (program.ts) and returns
// the exit code. Kept small: every command line loads this module, `--version` nothing else.
import { EXIT } from '../errors.js';
import { type CliIo, processIo, write, writeJson } from './io.js';
import { isVersionRequest, readVersions, versionText } from './version.js';

export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  const version = isVersionRequest(argv);
  if (version) {
    const versions = readVersions();
    if (version.json) writeJson(io.stdout, versions);
    else write(io.stdout, versionText(versions));
    return EXIT.OK;
  }
  const { runProgram } = await import('./program.js');
  return runProgram(argv, io);
}
