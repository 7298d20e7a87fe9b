// npm test's pretest step: builds the package the test/package/ tests inspect (gzip, into test/output/package/),
// or says why it cannot be built here (the tests then skip with the same reason).
import { rmSync } from 'node:fs';
import { buildPrebuilt, PREBUILT_DIR, packageUnavailable } from '../package/prebuilt.js';

const reason = packageUnavailable();
if (reason) {
  console.log(`package tests will skip: ${reason}`);
} else {
  rmSync(PREBUILT_DIR, { recursive: true, force: true });
  const started = Date.now();
  const { path } = buildPrebuilt();
  console.log(`built ${path} for the package tests in ${Date.now() - started} ms`);
}
