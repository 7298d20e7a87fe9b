// Preloaded into a CLI process (NODE_OPTIONS=--require) by the dead-letter tests: at exit it writes the
// process's peak resident set (VmHWM, in KiB) to the file named by PEAK_RSS_FILE.
const { readFileSync, writeFileSync } = require('node:fs');

const target = process.env.PEAK_RSS_FILE;
if (target) {
  process.on('exit', () => {
    const status = readFileSync('/proc/self/status', 'utf8');
    const kib = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1] ?? '0';
    writeFileSync(target, kib);
  });
}
