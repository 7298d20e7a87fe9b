// `threatcol outputs dead-letter NAME [--retry] [--json]`: lists what an output's receiver refused for good, or
// sends it again; what the receiver refuses again goes back to the dead letters.
import { renameSync, unlinkSync } from 'node:fs';
import type { Command } from 'commander';
import type { LoadedConfig } from '../../config/load-config.js';
import { ThreatcolError } from '../../errors.js';
import type { DeadLetter } from '../../outputs/dead-letter.js';
import type { StoredRecord } from '../../records/stored-record.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from '../common-options.js';
import { type CliIo, write, writeJson } from '../io.js';
import { formatTable } from '../table.js';
import { configuredOutput } from './known-output.js';
import { sendThrough } from './send-through.js';

interface DeadLetterOptions extends CommonOptions {
  retry?: boolean;
  json?: boolean;
}

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
      .option('--retry', 'send them again through the receiver; those refused again stay')
      .option('--json', 'print the dead letters as a JSON array'),
  ).action((name: string, options: DeadLetterOptions) => run(() => deadLetters(name, options, io)));
}

export async function deadLetters(name: string, options: DeadLetterOptions, io: CliIo): Promise<number> {
  const loaded = await loadFromOptions(options, io);
  if (options.retry) return retry(name, loaded, io);
  // Imported here: the definition above is loaded for every command line.
  const { readDeadLetters } = await import('../../outputs/dead-letter.js');
  const letters = readDeadLetters(loaded.dataDir, name);
  if (options.json) {
    writeJson(io.stdout, letters);
    return 0;
  }
  if (letters.length === 0) {
    write(io.stdout, `No dead letters for output ${name}.`);
    return 0;
  }
  write(
    io.stdout,
    formatTable(
      ['REFUSED AT', 'RECORD', 'THREAT', 'ANSWER'],
      letters.map((l) => [l.at, String(l.record.id), String(l.record.threat), l.answer]),
    ),
  );
  return 0;
}

async function retry(name: string, loaded: LoadedConfig, io: CliIo): Promise<number> {
  const output = configuredOutput(loaded, name);
  const { appendDeadLetters, deadLetterPath, readDeadLetterFile } = await import(
    '../../outputs/dead-letter.js'
  );
  const path = deadLetterPath(loaded.dataDir, name);
  // Taken aside first: the daemon may append new dead letters meanwhile, to a fresh file.
  const aside = `${path}.retrying-${process.pid}`;
  try {
    renameSync(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    write(io.stdout, `No dead letters for output ${name}.`);
    return 0;
  }
  const letters: DeadLetter[] = readDeadLetterFile(aside);
  const records = letters.map((l) => l.record as unknown as StoredRecord);
  const outcome = await sendThrough(output, records, io.env);
  const again = outcome.ok
    ? [
        ...outcome.report.refused.map((r) => ({ index: r.index, answer: r.answer })),
        ...outcome.report.retry.map((index) => ({ index, answer: 'asked to send again later' })),
      ]
    : records.map((_, index) => ({ index, answer: outcome.error }));
  appendDeadLetters(
    loaded.dataDir,
    name,
    again.map((a) => ({ line: JSON.stringify(records[a.index]), answer: a.answer })),
    new Date().toISOString(),
    null,
  );
  unlinkSync(aside);
  write(
    io.stdout,
    `Output ${name}: ${records.length - again.length} of ${records.length} dead letters delivered.`,
  );
  if (again.length > 0) {
    throw new ThreatcolError(
      'OUTPUT_FAILED',
      `output ${name}: ${again.length} records refused again: ${again[0]?.answer}`,
    );
  }
  return 0;
}
