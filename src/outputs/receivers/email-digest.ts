// The text of an alert mail: a digest of a batch, counts by criticality and the first records, one line each.
import { createHash } from 'node:crypto';
import { SEVERITY_LABELS } from '../../records/criticality.js';
import type { StoredRecord } from '../../records/stored-record.js';
import { summaryHeadline, summaryLines } from './group-text.js';
import type { GroupSummary, OutgoingRecord } from './receiver.js';
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
    ...batch.slice(0, DIGEST_LISTED).map(({ id, record }) => digestLine(id, record)),
  ];
  if (batch.length > DIGEST_LISTED)
    lines.push(`... and ${batch.length - DIGEST_LISTED} more (threatcol threats tail, or the dashboard).`);
  return {
    subject: oneLine(subject),
    text: `${lines.join('\n')}\n`,
    messageId: `<${first?.id ?? 'none'}.${last?.id ?? 'none'}.${batch.length}@threatcol>`,
  };
}

/** One record's line in a mail. */
export function digestLine(id: string, record: StoredRecord): string {
  const port = record.dst_port === undefined ? '' : `:${oneLine(record.dst_port)}`;
  return (
    `${oneLine(record.received_at)}  ${oneLine(record.criticality)} ${oneLine(record.severity)}  sensor ${oneLine(record.sensor)}  ` +
    `${oneLine(record.src_ip)} -> ${oneLine(record.dst_ip)}${port} ${oneLine(record.protocol)}  ${oneLine(record.threat)}  id ${oneLine(id)}`
  );
}

/**
 * A mail of group summaries: each one's headline ("203.0.113.5 — SSH brute force ×340 on 3 sensors in 10 min"),
 * span, sensors and samples. The same summaries make the same Message-ID.
 */
export function buildSummaryMail(
  summaries: readonly GroupSummary[],
  collector: string,
  subjectPrefix: string,
): Digest {
  const clean = (value: unknown) => oneLine(value);
  const headlines = summaries.map((s) => summaryHeadline(s, clean));
  const subject =
    summaries.length === 1
      ? `${subjectPrefix} ${headlines[0]}`
      : `${subjectPrefix} ${summaries.length} grouped alerts: ${headlines.join('; ')}`;
  const lines = [
    `threatcol on ${oneLine(collector)}: ${summaries.length} grouped alert${summaries.length === 1 ? '' : 's'}.`,
  ];
  for (const summary of summaries) lines.push('', ...summaryLines(summary, clean, digestLine));
  const digest = createHash('sha256');
  for (const s of summaries) digest.update(`${s.key}\n${s.firstAt}\n${s.count}\n`);
  return {
    subject: oneLine(subject, 300),
    text: `${lines.join('\n')}\n`,
    messageId: `<group.${digest.digest('hex').slice(0, 32)}@threatcol>`,
  };
}
