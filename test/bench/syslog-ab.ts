// Figure 14's threatcol side, this build against others (`--base [LABEL=]BIN`, as build-ab.ts takes them),
// both collectors running, the same loads alternated A B A B; messages per server CPU second per build and the
// median of the per-pair ratios:
//   node --import tsx test/bench/syslog-ab.ts --base /path/to/other/bin/threatcol [--pairs N]   (after a build)
import { join } from 'node:path';
import { argValue, baseBuilds } from './argv.js';
import { clientCertificates, FORMATS, measure, startSyslogCollector } from './figures-syslog.js';
import { BIN } from './processes.js';
import { fmt, median } from './report.js';
import { standaloneContext } from './standalone-context.js';

const count = 200_000;
const { ctx: base, root, close } = standaloneContext('syslog-ab');
const ctx = { ...base, pairs: Number(argValue('--pairs') ?? 7) };
const { pairs, log, pin } = ctx;
const builds = [{ label: 'this build', bin: BIN }, ...baseBuilds()];
const stops: (() => Promise<void>)[] = [];
try {
  const certs = clientCertificates(root);
  const collectors = [];
  for (const [i, b] of builds.entries()) {
    const c = await startSyslogCollector(ctx, join(root, `c${i}`), b.label, certs, b.bin);
    stops.push(c.stop);
    collectors.push(c.receiver);
  }
  log(
    `syslog A/B, ${builds.map((b) => b.label).join(' / ')}, ${pairs} pairs of ${fmt.n(count)} messages, ${pin.reason}`,
  );
  let runs = 0;
  const seed = () => Date.UTC(2026, 0, 1) + count * runs++;
  for (const format of FORMATS) {
    const cert = certs[format] as { certPath: string; keyPath: string };
    for (const c of collectors) await measure(ctx, c, format, count / 4, seed(), cert);
    const rates = collectors.map(() => [] as number[]);
    for (let i = 0; i < pairs; i++) {
      // Alternate which build goes first, so neither always follows the other's leftovers.
      const order =
        i % 2 === 0 ? collectors.map((_, k) => k) : collectors.map((_, k) => collectors.length - 1 - k);
      for (const k of order) {
        rates[k]?.push(
          (await measure(ctx, collectors[k] as never, format, count, seed(), cert)).perCpuSecond,
        );
      }
    }
    for (const [k, c] of collectors.entries()) {
      const ratio =
        k === 0
          ? ''
          : `, this build / it: ${fmt.x(median((rates[0] ?? []).map((v, i) => v / ((rates[k] ?? [])[i] ?? Number.NaN))))}`;
      log(
        `  ${format} ${c.name}: ${fmt.n(median(rates[k] ?? []))} msg/CPU-s (${(rates[k] ?? []).map(fmt.n).join(' ')})${ratio}`,
      );
    }
  }
} finally {
  for (const stop of stops) await stop().catch(() => {});
  close();
}
