// `threatcol outputs test NAME`: one marked sample record through the output's real receiver, and its answer.
import type { Command } from 'commander';
import { CATALOGUE, ThreatcolError } from '../../errors.js';
import { newRecordId } from '../../records/record-id.js';
import type { StoredRecord } from '../../records/stored-record.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from '../common-options.js';
import { type CliIo, write } from '../io.js';
import { configuredOutput } from './known-output.js';
import { sendThrough } from './send-through.js';

export function registerOutputsTest(
  parent: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  addCommonOptions(
    parent
      .command('test')
      .description('send one marked sample record through an output and print the answer')
      .argument('<name>', 'output name'),
  ).action((name: string, options: CommonOptions) => run(() => testOutput(name, options, io)));
}

/** The sample: recognisable by its sensor and threat, never a real detection. */
export function sampleRecord(now: number): StoredRecord {
  return {
    id: newRecordId(),
    received_at: new Date(now).toISOString(),
    sensor: 'threatcol-test',
    endpoint: 'generic',
    criticality: 0,
    severity: 'info',
    criticality_source: 'default',
    src_ip: '192.0.2.1',
    dst_ip: '192.0.2.2',
    dst_port: 0,
    protocol: 'test',
    threat: 'threatcol outputs test (not a threat)',
    remote_addr: '127.0.0.1',
    original: { test: true },
  };
}

export async function testOutput(name: string, options: CommonOptions, io: CliIo): Promise<number> {
  const loaded = await loadFromOptions(options, io);
  const output = configuredOutput(loaded, name);
  const record = sampleRecord(Date.now());
  const outcome = await sendThrough(output, [record], io.env);
  if (!outcome.ok) {
    throw new ThreatcolError(
      'OUTPUT_FAILED',
      `output ${name} (${output.type}): ${CATALOGUE.OUTPUT_FAILED.message}: ${outcome.error}`,
    );
  }
  const refused = outcome.report.refused[0];
  if (refused)
    throw new ThreatcolError(
      'OUTPUT_FAILED',
      `output ${name}: the receiver refused the record: ${refused.answer}`,
    );
  if (outcome.report.retry.length > 0) {
    throw new ThreatcolError(
      'OUTPUT_FAILED',
      `output ${name}: the receiver asked to send the record again later`,
    );
  }
  write(io.stdout, `Output ${name} (${output.type}): the receiver took the sample record ${record.id}.`);
  return 0;
}
