// Figures 12 and 13 alone (what `npm run bench` runs among the others), for work on the outputs:
//   node --import tsx test/bench/outputs.ts [--quick] [--only 12|13] [--pairs N] [--seconds S] [--base [LABEL=]BIN]
// (after `npm run build`); --base: another checkout's bin/threatcol with the same output in figure 13's pairs.
import { argValue, baseBuilds } from './argv.js';
import { forwardingRows, outputIngestRows } from './figures-outputs.js';
import { type Row, textTable } from './report.js';
import { standaloneContext } from './standalone-context.js';

const { ctx, root, close } = standaloneContext('outputs');
const { quick, log, pin } = ctx;
const only = argValue('--only');
const rows: Row[] = [];
try {
  log(`outputs figures${quick ? ' --quick' : ''}, ${pin.reason}`);
  if (only !== '13') {
    log('figure 12: forwarding throughput per forwarder CPU second');
    rows.push(...(await forwardingRows(ctx)));
  }
  if (only !== '12') {
    log('figure 13: keep-alive ingest with one output attached against none');
    rows.push(...(await outputIngestRows(ctx, root, baseBuilds())));
  }
} finally {
  close();
}
process.stdout.write(`\n${textTable(rows)}\n`);
process.exitCode = rows.some((r) => r.pass === false) ? 1 : 0;
