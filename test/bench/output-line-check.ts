// What checking a stored line costs an output's feed, per line of the bench's firewall record (~850 bytes, as
// prefill.ts writes them): its head alone (what 'head' feeds checked before), its head and rest off the bytes
// (record-rest.ts, what they check now), and JSON.parse with the shape check (what other lines get). Three rounds
// in one process, each with its ratios. Run directly:
//   node --import tsx test/bench/output-line-check.ts
import { loadConfig } from '../../src/config/load-config.js';
import { firewallRoute } from '../../src/inputs/https/firewall-route.js';
import { storedLine } from '../../src/records/stored-line.js';
import {
  HEAD_ENDPOINT,
  HEAD_FORMAT,
  HEAD_MARKS,
  HEAD_REST,
  markRecordHead,
} from '../../src/store/record-head.js';
import { isWholeRest } from '../../src/store/record-rest.js';
import { parseStoredRecord } from '../../src/store/record-shape.js';
import { firewallRecord } from './payloads.js';

const { config } = loadConfig({
  env: {},
  defaultConfigPath: '/nonexistent',
  overrides: { dataDir: '/tmp/m5' },
});
const N = 2000;
let text = '';
for (let i = 0; i < N; i++) {
  const r = firewallRoute.build(firewallRecord(), {
    id: () => `019aa54e-0b1c-7c3e-9d0a-${String(i).padStart(12, '0')}`,
    receivedAt: new Date().toISOString(),
    sensor: 'bench',
    remoteAddr: '127.0.0.1',
    timezone: 'UTC',
    repaired: false,
    rules: config.firewall,
    ascii: true,
    plainStrings: true,
  });
  text += `${storedLine(r)}\n`;
}
const buf = Buffer.from(text);
const lines: [number, number][] = [];
let s = 0;
for (;;) {
  const nl = buf.indexOf(10, s);
  if (nl < 0) break;
  lines.push([s, nl]);
  s = nl + 1;
}
console.log('line bytes', (lines[0] as [number, number])[1] - (lines[0] as [number, number])[0]);
function run(name: string, f: (a: number, b: number) => boolean) {
  for (let w = 0; w < 5; w++) for (const [a, b] of lines) f(a, b);
  const rounds = 100;
  const t = performance.now();
  let ok = 0;
  for (let r = 0; r < rounds; r++) for (const [a, b] of lines) if (f(a, b)) ok++;
  const us = ((performance.now() - t) * 1000) / (rounds * lines.length);
  console.log(name.padEnd(28), us.toFixed(3), 'us/line', ok === rounds * lines.length);
  return us;
}
const m = HEAD_MARKS;
for (let k = 0; k < 3; k++) {
  const head = run('head (before)', (a, b) => markRecordHead(buf, a, b));
  const whole = run(
    'head + rest by bytes (now)',
    (a, b) =>
      markRecordHead(buf, a, b) &&
      isWholeRest(
        buf,
        m[HEAD_REST] as number,
        b,
        (m[HEAD_ENDPOINT + 1] as number) - (m[HEAD_ENDPOINT] as number) === 6,
        m[HEAD_FORMAT] === 1,
      ),
  );
  const parse = run(
    'head + JSON.parse + shape',
    (a, b) => markRecordHead(buf, a, b) && parseStoredRecord(buf.toString('utf8', a, b)) !== null,
  );
  console.log(
    'ratios now/before',
    (whole / head).toFixed(2),
    'parse/before',
    (parse / head).toFixed(2),
    'extra us',
    (whole - head).toFixed(3),
    (parse - head).toFixed(3),
  );
}
