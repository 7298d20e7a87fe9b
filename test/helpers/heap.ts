// This test process's heap in use after full collections (gc() exposed at run time, no flag needed).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export function usedHeapAfterGc(): number {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}
