// test/store/'s files (both backends behind the Store interface, real nats-servers), in this one process:
// test/helpers/together.ts says why. Most of their time is waiting on NATS (acknowledgement timeouts, restarts),
// so the batch is named to start first, beside the CPU-bound ones, instead of ending the run alone.
import { runTogether } from './helpers/together.js';

await runTogether(new URL('store/', import.meta.url));
