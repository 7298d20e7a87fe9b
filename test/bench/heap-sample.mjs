// A preload for a collector under a benchmark's load (`PROFILE_NODE_ARGS="--import ./test/bench/heap-sample.mjs"`
// with profile.ts or profile-outputs.ts): the inspector's sampling heap profiler, keeping the objects a
// mark-compact collected and dropping those a scavenge freed, so the profile is what survived into the old
// space, by where it was allocated. Written to HEAP_SAMPLE_OUT (default /tmp/heap-sample-PID.json) every
// HEAP_SAMPLE_EVERY_MS (3000), the last write covering the run; read it with heap-summary.mjs.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const session = new Session();
session.connect();
const out = process.env.HEAP_SAMPLE_OUT ?? `/tmp/heap-sample-${process.pid}.json`;
session.post('HeapProfiler.enable');
session.post('HeapProfiler.startSampling', {
  samplingInterval: 4096,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: false,
});
const dump = () =>
  session.post('HeapProfiler.getSamplingProfile', (error, result) => {
    if (!error) writeFileSync(out, JSON.stringify(result.profile));
  });
setInterval(dump, Number(process.env.HEAP_SAMPLE_EVERY_MS ?? 3000)).unref();
