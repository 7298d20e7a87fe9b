// Figures 12 and 13 alone (what `npm run bench` runs among the others), for work on the outputs:
//   node --import tsx test/bench/outputs.ts [--quick]     (after `npm run build`)
import { forwardingRows, outputIngestRows } from './figures-outputs.js';
import { type Row, textTable } from './report.js';
import { standaloneContext } from './standalone-context.js';

const { ctx, root, close } = standaloneContext('outputs');
const { quick, log, pin } = ctx;
const rows: Row[] = [];
try {
  log(`outputs figures${quick ? ' --quick' : ''}, ${pin.reason}`);
  log('figure 12: forwarding throughput per forwarder CPU second');
  rows.push(...(await forwardingRows(ctx)));
  log('figure 13: keep-alive ingest with one output attached against none');
  rows.push(...(await outputIngestRows(ctx, root)));
} finally {
  close();
}
process.stdout.write(`\n${textTable(rows)}\n`);
process.exitCode = rows.some((r) => r.pass === false) ? 1 : 0;
