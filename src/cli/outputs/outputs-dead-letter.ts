// `threatcol outputs dead-letter NAME [--retry] [--json] [--limit N]`: lists what an output's receiver refused
// for good (the newest, with a count of all), or sends it again in batches; what the receiver refuses again
// goes back to the dead letters. Both read the files a line at a time, whatever their size.
import type { Command } from 'commander';
import type { LoadedConfig } from '../../config/load-config.js';
import { ThreatcolError } from '../../errors.js';
import type { DeadLetter } from '../../outputs/dead-letter.js';
import type { StoredRecord } from '../../records/stored-record.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from '../common-options.js';
import { type CliIo, write } from '../io.js';
import { formatTable } from '../table.js';
import { safeJsonLine } from '../terminal-text.js';
import { configuredOutput } from './known-output.js';

/** How long after a claim its file is read to its end again before it goes (an append opened before it). */
const CLAIM_SETTLE_MS = 1000;

import { openSender } from './send-through.js';

interface DeadLetterOptions extends CommonOptions {
  retry?: boolean;
  json?: boolean;
  limit?: string;
}

/** Rows the table shows when --limit is not given. */
const TABLE_ROWS = 20;
/** The most --limit takes: the rows shown are held to align the table's columns. */
const MAX_LIMIT = 100_000;

export function registerOutputsDeadLetter(
  parent: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  addCommonOptions(
    parent
      .command('dead-letter')
      .description("list an output's dead letters (records its receiver refused), or send them again")
      .argument('<name>', 'output name')
      .option('--retry', 'send them again through the receiver, in batches; those refused again stay')
      .option('--json', 'print the dead letters as a JSON array, oldest first, one a line')
      .option('--limit <n>', `only the newest n (default: ${TABLE_ROWS} in the table, all with --json)`),
  ).action((name: string, options: DeadLetterOptions) => run(() => deadLetters(name, options, io)));
}

export async function deadLetters(name: string, options: DeadLetterOptions, io: CliIo): Promise<number> {
  const limit = options.limit === undefined ? null : toLimit(options.limit);
  const loaded = await loadFromOptions(options, io);
  if (options.retry) return retry(name, loaded, io);
  // Imported here: the definition above is loaded for every command line.
  const { readDeadLetters } = await import('../../outputs/dead-letter.js');
  const { claimHeld } = await import('../../outputs/dead-letter-files.js');
  const letters = readDeadLetters(loaded.dataDir, name);
  if (options.json && limit === null) {
    // Streamed: one letter a line inside the array, never the whole list in memory.
    let first = true;
    io.stdout.write('[');
    for (const { letter } of letters) {
      await writeChunk(io, `${first ? '\n' : ',\n'}${safeJsonLine(JSON.stringify(letter))}`);
      first = false;
    }
    io.stdout.write(first ? ']\n' : '\n]\n');
    return 0;
  }
  // The newest `limit` in a ring; the rest only counted.
  const keep = limit ?? TABLE_ROWS;
  const newest: DeadLetter[] = [];
  let total = 0;
  let interrupted = 0;
  const busy = new Map<number, number>();
  /** Per file a retry took: is that retry still running (asked once per file, not per letter). */
  const held = new Map<string, boolean>();
  for (const { letter, file } of letters) {
    total += 1;
    if (keep > 0) {
      if (newest.length === keep) newest.shift();
      newest.push(letter);
    }
    if (file.claimedBy === null) continue;
    if (!held.has(file.file)) held.set(file.file, claimHeld(file.claimedBy));
    if (held.get(file.file)) busy.set(file.claimedBy, (busy.get(file.claimedBy) ?? 0) + 1);
    else interrupted += 1;
  }
  if (options.json) {
    write(io.stdout, safeJsonLine(`[${newest.map((l) => `\n${JSON.stringify(l)}`).join(',')}\n]`));
    return 0;
  }
  if (total === 0) {
    write(io.stdout, `No dead letters for output ${name}.`);
    return 0;
  }
  const lines = [
    // The table's cells are cleaned there: its rows are lines.
    ...formatTable(
      ['REFUSED AT', 'RECORD', 'THREAT', 'ANSWER'],
      newest.map((l) => [String(l.at), String(l.record.id), String(l.record.threat), String(l.answer)]),
    ).split('\n'),
    newest.length < total
      ? `(the newest ${newest.length} of ${total} dead letters; --limit N for more, --json for all)`
      : `(${total} dead ${total === 1 ? 'letter' : 'letters'})`,
  ];
  if (interrupted > 0)
    lines.push(`(${interrupted} of them were left by an interrupted --retry: the next --retry sends them)`);
  for (const [pid, count] of busy)
    lines.push(`(${count} of them are being sent by a --retry, process ${pid})`);
  write(io.stdout, lines);
  return 0;
}

function toLimit(text: string): number {
  const n = /^\d{1,9}$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= 1 && n <= MAX_LIMIT))
    throw new ThreatcolError('USAGE', `--limit must be an integer from 1 to ${MAX_LIMIT}, not "${text}"`);
  return n;
}

/** Writes and waits for the stream to drain when it asks to: a slow reader holds the reading back. */
function writeChunk(io: CliIo, text: string): Promise<void> | undefined {
  if (io.stdout.write(text)) return undefined;
  return new Promise((resolve) => io.stdout.once('drain', () => resolve()));
}

async function retry(name: string, loaded: LoadedConfig, io: CliIo): Promise<number> {
  const output = configuredOutput(loaded, name);
  const [{ appendDeadLetters, lastDeadLetterIds }, claims] = await Promise.all([
    import('../../outputs/dead-letter.js'),
    import('../../outputs/dead-letter-claims.js'),
  ]);
  const { dataDir } = loaded;
  // Taken first, file by file: the daemon appends new dead letters meanwhile to a fresh file.
  const { claims: taken, busy } = claims.claimDeadLetters(dataDir, name);
  if (taken.length === 0) {
    write(
      io.stdout,
      busy.length > 0
        ? `Output ${name}: its dead letters are being sent by another --retry (process ${busy.join(', ')}).`
        : `No dead letters for output ${name}.`,
    );
    return 0;
  }
  const sender = await openSender(output, io.env);
  let sent = 0;
  let again = 0;
  /** Dead letters the output's deadLetterMaxBytes dropped while this retry wrote refusals again. */
  let dropped = 0;
  let firstAnswer: string | null = null;
  let failure: string | null = null;
  const takenAt = Date.now();
  /** Sends the claim's letters from where it got to, to its end; false when none were left. */
  const sendClaim = async (claim: (typeof taken)[number]): Promise<boolean> => {
    let any = false;
    for (const batch of claims.claimBatches(dataDir, claim, output.batch)) {
      any = true;
      const records = batch.letters.map((l) => l.record as unknown as StoredRecord);
      const outcome = records.length > 0 ? await sender.send(records) : null;
      if (outcome && !outcome.ok) {
        failure = outcome.error;
        return any;
      }
      const refused = outcome?.ok
        ? [
            ...outcome.report.refused.map((r) => ({ index: r.index, answer: r.answer })),
            ...outcome.report.retry.map((index) => ({ index, answer: 'asked to send again later' })),
          ]
        : [];
      // A retry that died after writing this batch's refusals, before recording it done, wrote them already.
      const written = claim.resumed ? lastDeadLetterIds(dataDir, name, 2 * records.length) : null;
      dropped += appendDeadLetters(
        dataDir,
        name,
        refused
          .filter((a) => !written?.has(String(records[a.index]?.id)))
          .map((a) => ({ line: JSON.stringify(records[a.index]), answer: a.answer })),
        new Date().toISOString(),
        null,
        { maxBytes: output.deadLetterMaxBytes },
      ).records;
      claims.advanceClaim(dataDir, claim, batch.end);
      sent += records.length;
      again += refused.length;
      firstAnswer ??= refused[0]?.answer ?? null;
    }
    return any;
  };
  try {
    for (const claim of taken) {
      await sendClaim(claim);
      if (failure !== null) break;
      // An append the daemon opened just before the file was claimed may land in it after this read: the claim
      // is read to its end again once a second has passed since it was taken, and only then goes.
      await new Promise((r) => setTimeout(r, Math.max(0, takenAt + CLAIM_SETTLE_MS - Date.now())));
      let more = true;
      while (more && failure === null) more = await sendClaim(claim);
      if (failure !== null) break;
      claims.finishClaim(dataDir, claim);
    }
  } finally {
    await sender.close();
    // Not sent (the receiver failed, or this command did): handed back, from where it got to.
    for (const claim of taken) claims.releaseClaim(dataDir, claim);
  }
  const delivered = sent - again;
  if (dropped > 0)
    write(
      io.stderr,
      `Output ${name}: over deadLetterMaxBytes, the oldest ${dropped} dead letters were dropped.`,
    );
  if (failure !== null) {
    throw new ThreatcolError(
      'OUTPUT_FAILED',
      `output ${name}: ${delivered} dead letters delivered, then the receiver failed: ${failure}; the rest stay`,
    );
  }
  write(io.stdout, `Output ${name}: ${delivered} of ${sent} dead letters delivered.`);
  if (again > 0) {
    throw new ThreatcolError(
      'OUTPUT_FAILED',
      `output ${name}: ${again} records refused again: ${firstAnswer}`,
    );
  }
  return 0;
}
