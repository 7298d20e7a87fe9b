// Measures `threatcol threats search` on a store prefilled like the benchmark's (SEARCH_BYTES, default 1 GiB)
// through the compiled CLI: the look-up's figure 7b alone; run under `flock /tmp/threatcol-bench.lock`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lookUpFigure, runLookUp } from '../bench/figure-look-up.js';
import { prefillStore } from '../bench/prefill.js';

const bytes = Number(process.env.SEARCH_BYTES ?? 1024 ** 3);
const dir = mkdtempSync(join(tmpdir(), 'threatcol-search-'));
try {
  const filled = prefillStore(dir, bytes);
  console.log(JSON.stringify({ prefilled: filled }));
  const { rows, runs } = await lookUpFigure({ dataDir: dir, ...filled }, 3);
  console.log(JSON.stringify({ runs, row: rows[0] }));
  // The common case: an address in the newest records answers a page at once.
  console.log(JSON.stringify({ matching: await runLookUp(dir, ['--src', '192.0.2.0/24', '--limit', '50']) }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
