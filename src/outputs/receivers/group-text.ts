// A group summary (outputs/grouping.ts) in words, for the chat message (webhook format `slack`) and the mail:
// "203.0.113.5 — SSH brute force ×340 on 3 sensors in 10 min", then when, where, and a few sample records. The
// group's values and the samples are what senders wrote: each goes through the caller's cleaning (chatText for
// chat, oneLine for mail).
import type { StoredRecord } from '../../records/stored-record.js';
import type { GroupSummary } from './receiver.js';

const UNIT_WORDS: Record<string, string> = { s: 's', m: 'min', h: 'h' };

/** "10m" as "10 min". */
export function windowWords(window: string): string {
  const m = /^(\d+)([smh])$/.exec(window);
  return m ? `${m[1]} ${UNIT_WORDS[m[2] as string]}` : window;
}

/** A group's value as read: "no src_country" for a field the records lack, "AS15169" for an AS number. */
function valueWords(field: string, value: unknown): unknown {
  if (value === null || value === undefined) return `no ${field}`;
  return field.endsWith('_asn') && typeof value === 'number' ? `AS${value}` : value;
}

/** The one line that says what a summary counts. */
export function summaryHeadline(summary: GroupSummary, clean: (value: unknown) => string): string {
  const what =
    summary.group === null
      ? 'records of further groups (past group.maxGroups)'
      : Object.entries(summary.group)
          .map(([field, value]) => clean(valueWords(field, value)))
          .join(' — ');
  const sensors = `${summary.sensors.length}${summary.moreSensors ? '+' : ''} sensor${summary.sensors.length === 1 && !summary.moreSensors ? '' : 's'}`;
  return `${what} ×${summary.count} on ${sensors} in ${windowWords(summary.window)}`;
}

/** The summary's lines: headline, span and sensors, then one line per sample (`line` formats a record). */
export function summaryLines(
  summary: GroupSummary,
  clean: (value: unknown) => string,
  line: (id: string, record: StoredRecord) => string,
): string[] {
  const lines = [
    summaryHeadline(summary, clean),
    `from ${clean(summary.firstAt)} to ${clean(summary.lastAt)}; sensors ${summary.sensors.map((s) => clean(s)).join(', ')}${summary.moreSensors ? ', …' : ''}`,
  ];
  for (const sample of summary.samples) {
    const record = JSON.parse(sample) as StoredRecord & { id: string };
    lines.push(line(record.id, record));
  }
  return lines;
}
