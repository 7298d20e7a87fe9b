// What the injected file layers share: half of a batch reaching the file before the disk fails.
import { nodeFileOps } from '../../src/store/file-ops.js';

/** Writes the first half (at least 1 byte) of `buffers` for real, as a disk that fills up mid-write; the bytes written. */
export function writeHalf(fd: number, buffers: readonly Buffer[]): Promise<number> {
  const all = Buffer.concat(buffers);
  return nodeFileOps.writev(fd, [all.subarray(0, Math.max(1, Math.floor(all.length / 2)))]);
}

export function diskFullError(): Error {
  return Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
}
