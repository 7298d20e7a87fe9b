// What `outputs dead-letter NAME --retry` takes and how far it got, kept in the files' names so that a retry
// killed at any point loses nothing: the next one takes over what a dead process held, from where it stopped.
import { unlinkSync } from 'node:fs';
import { syncDir } from '../data-dir/file-owner.js';
import { type DeadLetter, parseLetter } from './dead-letter.js';
import {
  claimHeld,
  fileLines,
  listDeadLetterFiles,
  outputsDir,
  renameIn,
  rotateDeadLetters,
} from './dead-letter-files.js';

/** One file this process took: its name before it was taken, its name now, and the bytes already done. */
export interface Claim {
  base: string;
  current: string;
  offset: number;
  /** Taken over from a retry that died: its last batch may have been written to the dead letters already. */
  resumed: boolean;
}

const claimName = (base: string, offset: number) =>
  `${base}.retrying-${process.pid}${offset > 0 ? `-${offset}` : ''}`;

/**
 * Takes every dead letter of the output for this process, oldest first: the file appended to is rotated first
 * (refusals meanwhile, the daemon's or this retry's, start a new one), then each part is renamed as taken, and
 * parts left by a retry that died are taken over. `busy`: retries still running, whose parts stay theirs.
 */
export function claimDeadLetters(dataDir: string, name: string): { claims: Claim[]; busy: number[] } {
  rotateDeadLetters(dataDir, name);
  const claims: Claim[] = [];
  const busy = new Set<number>();
  for (const file of listDeadLetterFiles(dataDir, name)) {
    if (file.seq === Infinity) continue;
    if (file.claimedBy !== null && claimHeld(file.claimedBy)) {
      busy.add(file.claimedBy);
      continue;
    }
    const base = file.claimedBy === null ? file.file : file.file.replace(/\.retrying-[\d-]+$/, '');
    const current = claimName(base, file.offset);
    if (!renameIn(dataDir, file.file, current)) continue;
    claims.push({ base, current, offset: file.offset, resumed: file.claimedBy !== null });
  }
  if (claims.length > 0) syncDir(outputsDir(dataDir));
  return { claims, busy: [...busy] };
}

/**
 * The claim's dead letters from where it got to, in batches of at most `maxRecords` letters and `maxBytes`
 * of their records' text; `end`: the offset to record once the batch is done.
 */
export function* claimBatches(
  dataDir: string,
  claim: Claim,
  limits: { maxRecords: number; maxBytes: number },
): Generator<{ letters: DeadLetter[]; end: number }> {
  let letters: DeadLetter[] = [];
  let bytes = 0;
  let end = claim.offset;
  for (const { line, end: lineEnd } of fileLines(`${outputsDir(dataDir)}/${claim.current}`, claim.offset)) {
    const letter = parseLetter(line);
    if (letter) {
      if (
        letters.length > 0 &&
        (letters.length >= limits.maxRecords || bytes + line.length > limits.maxBytes)
      ) {
        yield { letters, end };
        letters = [];
        bytes = 0;
      }
      letters.push(letter);
      bytes += line.length;
    }
    end = lineEnd;
  }
  if (letters.length > 0 || end > claim.offset) yield { letters, end };
}

/** Records that the claim's letters up to `offset` are done (delivered, or written again as refused). */
export function advanceClaim(dataDir: string, claim: Claim, offset: number): void {
  const next = claimName(claim.base, offset);
  if (!renameIn(dataDir, claim.current, next)) throw new Error(`${claim.current} is gone`);
  syncDir(outputsDir(dataDir));
  claim.current = next;
  claim.offset = offset;
  claim.resumed = false;
}

/** Every letter of the claim is done: the file goes. */
export function finishClaim(dataDir: string, claim: Claim): void {
  try {
    unlinkSync(`${outputsDir(dataDir)}/${claim.current}`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  syncDir(outputsDir(dataDir));
}

/** Hands a claim back (the receiver failed): the next retry takes it from where this one stopped. */
export function releaseClaim(dataDir: string, claim: Claim): void {
  const free = `${claim.base}.retrying-0${claim.offset > 0 ? `-${claim.offset}` : ''}`;
  if (renameIn(dataDir, claim.current, free)) claim.current = free;
}
