// Figure 14 alone (what `npm run bench` runs among the others), for work on the syslog input:
//   node --import tsx test/bench/syslog.ts [--quick]     (after `npm run build`)
import { syslogRows } from './figures-syslog.js';
import { textTable } from './report.js';
import { standaloneContext } from './standalone-context.js';

const { ctx, root, close } = standaloneContext('syslog');
try {
  ctx.log(`figure 14: syslog over TLS${ctx.quick ? ' --quick' : ''}, ${ctx.pin.reason}`);
  const rows = await syslogRows(ctx, root);
  process.stdout.write(`\n${textTable(rows)}\n`);
  process.exitCode = rows.some((r) => r.pass === false) ? 1 : 0;
} finally {
  close();
}
