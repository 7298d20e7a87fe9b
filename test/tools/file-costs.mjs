// What each test file of a suite run costs: loaded with --import into every test file's process, it appends one
// line per file when the process exits: its start and end (epoch ms), its own CPU seconds, the CPU seconds of the
// children it waited for (the `serve`s, CLI runs, builds it started), and its path. A developer's tool, not part of
// `npm test` (docs/development.md, "What the suite costs"):
//   node --import tsx --import ./test/tools/file-costs.mjs --test --test-concurrency=4 <the files of npm test's script>
//   awk -F'\t' '{ print $3 + $4 "\t" ($2 - $1) / 1000 "\t" $5 }' /tmp/threatcol-file-costs.tsv | sort -nr | head
// (CPU seconds, wall seconds, file; FILE_COSTS=PATH writes elsewhere; remove the file before a new run).
// Children a file left running (ended by its last hook without a wait) are not counted: the per-file CPU is a floor.
import { appendFileSync, readFileSync } from 'node:fs';

const file = process.argv[1] ?? '';
if (file.endsWith('.test.ts')) {
  const startedAt = Date.now();
  process.on('exit', () => {
    // /proc/self/stat after the command's name: utime, stime, cutime and cstime are fields 11-14, in clock ticks.
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
    const ticks = (i) => Number(fields[i] ?? 0) / 100;
    const own = ticks(11) + ticks(12);
    const children = ticks(13) + ticks(14);
    const path = file.replace(/.*\/test\//, 'test/');
    appendFileSync(
      process.env.FILE_COSTS ?? '/tmp/threatcol-file-costs.tsv',
      `${startedAt}\t${Date.now()}\t${own.toFixed(2)}\t${children.toFixed(2)}\t${path}\n`,
    );
  });
}
