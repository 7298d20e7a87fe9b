// test/server/'s files (the real HTTPS server in-process), in this one process: test/helpers/together.ts says why.
import { runTogether } from './helpers/together.js';

await runTogether(new URL('server/', import.meta.url));
