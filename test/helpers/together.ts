// Every test file of one folder of test/ run in the process that calls this (test/_unit.test.ts,
// test/_server.test.ts, test/_store.test.ts): npm test runs those folders so and every other folder's files each
// in a process of its own (package.json's script lists which). Starting Node with tsx and loading the sources each
// file imports costs more than most of these files' tests (test/unit/: 36 s of CPU in one process against 67 s in
// a process each; test/server/: 23 against 39; test/store/: 14 against 19). So the files share module state (the
// record ids' clock, caches, the process's metrics): a test there may not assume a fresh process. Any file still
// runs alone: node --import tsx --test FILE.
import { readdirSync } from 'node:fs';

export async function runTogether(folder: URL): Promise<void> {
  for (const file of readdirSync(folder)
    .filter((f) => f.endsWith('.test.ts'))
    .sort())
    await import(new URL(file, folder).href);
}
