// The text of an alert mail: a digest of a batch, counts by criticality and the first records, one line each.
import { SEVERITY_LABELS } from '../../records/criticality.js';
import type { OutgoingRecord } from './receiver.js';
import { oneLine } from './record-text.js';

/** Records listed one by one in a mail; the rest are counted. */
export const DIGEST_LISTED = 50;

export interface Digest {
  subject: string;
  text: string;
  /** The same batch makes the same Message-ID, so a re-sent mail can be recognised (first id, last id, count). */
  messageId: string;
}

export function buildDigest(
  batch: readonly OutgoingRecord[],
  collector: string,
  subjectPrefix: string,
): Digest {
  const counts = [0, 0, 0, 0, 0];
  for (const entry of batch) {
    const level = Math.min(4, Math.max(0, Math.trunc(entry.record.criticality) || 0));
    counts[level] = (counts[level] ?? 0) + 1;
  }
  const byLevel = counts
    .map((count, level) => ({ count, level }))
    .reverse()
    .filter(({ count }) => count > 0);
  const plural = batch.length === 1 ? 'threat' : 'threats';
  const subject =
    `${subjectPrefix} ${batch.length} ${plural}: ` +
    byLevel.map(({ count, level }) => `${count} ${SEVERITY_LABELS[level]}`).join(', ');
  const first = batch[0];
  const last = batch[batch.length - 1];
  const lines = [
    `threatcol on ${oneLine(collector)}: ${batch.length} ${plural} received from ${oneLine(first?.record.received_at)} to ${oneLine(last?.record.received_at)}.`,
    '',
    'By criticality:',
    ...byLevel.map(
      ({ count, level }) =>
        `  ${level} ${(SEVERITY_LABELS[level] ?? '').padEnd(13)} ${String(count).padStart(8)}`,
    ),
    '',
    batch.length > DIGEST_LISTED ? `The first ${DIGEST_LISTED}:` : 'The records:',
    ...batch.slice(0, DIGEST_LISTED).map(({ id, record }) => {
      const port = record.dst_port === undefined ? '' : `:${record.dst_port}`;
      return (
        `${oneLine(record.received_at)}  ${record.criticality} ${oneLine(record.severity)}  sensor ${oneLine(record.sensor)}  ` +
        `${oneLine(record.src_ip)} -> ${oneLine(record.dst_ip)}${port} ${oneLine(record.protocol)}  ${oneLine(record.threat)}  id ${id}`
      );
    }),
  ];
  if (batch.length > DIGEST_LISTED)
    lines.push(`... and ${batch.length - DIGEST_LISTED} more (threatcol threats tail, or the dashboard).`);
  return {
    subject: oneLine(subject),
    text: `${lines.join('\n')}\n`,
    messageId: `<${first?.id ?? 'none'}.${last?.id ?? 'none'}.${batch.length}@threatcol>`,
  };
}
