// npm test's first step: the suite runs on the Node.js runtime package.json pins (node_modules/.bin/node, which npm
// scripts put first on PATH), never on whatever `node` the machine has; anything else stops the run here, loudly.
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { pinnedRuntime } from '../../packaging/runtime.js';

const checkout = fileURLToPath(new URL('../..', import.meta.url));
const pinned = pinnedRuntime(checkout);
let installed = '';
try {
  installed = realpathSync(pinned.node);
} catch {
  // not installed: said below
}
if (process.version !== `v${pinned.version}` || realpathSync(process.execPath) !== installed) {
  process.stderr.write(
    `npm test runs on the pinned Node.js ${pinned.version} (${pinned.name}, node_modules/.bin/node from npm ci), ` +
      `but \`node\` here is ${process.version} at ${process.execPath}` +
      `${installed === '' ? `; ${pinned.node} is not installed: run npm ci (without --omit=optional)` : ''}\n`,
  );
  process.exit(1);
}
process.stdout.write(
  `tests run on Node.js ${process.version} (${pinned.name}, pinned in package-lock.json)\n`,
);
