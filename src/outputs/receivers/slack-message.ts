// The human text of an alert (webhook format `slack`): counts by criticality, then the first records, one line
// each, short enough for a chat message (Slack, Mattermost, Teams accept the same `{"text": ...}`). Every value
// of a record goes through `chatText`: it stays on its line and cannot mention, link or format as markup.
import type { StoredRecord } from '../../records/stored-record.js';
import { summaryLines } from './group-text.js';
import type { GroupSummary, OutgoingRecord } from './receiver.js';
import { chatText } from './record-text.js';

export function slackMessage(batch: readonly OutgoingRecord[], quoted: number): string {
  const counts = new Map<string, number>();
  for (const { record } of batch) {
    const level = chatText(record.criticality, 20);
    counts.set(level, (counts.get(level) ?? 0) + 1);
  }
  const byLevel = [...counts]
    .sort((a, b) => Number(b[0]) - Number(a[0]) || (a[0] < b[0] ? -1 : 1))
    .map(([level, n]) => `${n} × criticality ${level}`)
    .join(', ');
  const lines = [`threatcol: ${batch.length} threat record${batch.length === 1 ? '' : 's'} (${byLevel})`];
  for (const { id, record } of batch.slice(0, quoted)) lines.push(slackLine(id, record));
  if (batch.length > quoted) lines.push(`… and ${batch.length - quoted} more`);
  return lines.join('\n');
}

/** One record's line in a chat message. */
export function slackLine(id: string, r: StoredRecord): string {
  const port = r.dst_port === undefined ? '' : `:${chatText(r.dst_port)}`;
  const protocol = r.protocol === undefined ? '' : `/${chatText(r.protocol)}`;
  return (
    `• [${chatText(r.criticality, 20)}] ${chatText(r.threat)} — ${chatText(r.src_ip)} → ${chatText(r.dst_ip)}${port}${protocol} ` +
    `(sensor ${chatText(r.sensor)}, ${chatText(r.received_at)}, id ${chatText(id)})`
  );
}

/** A group summary as a chat message: "threatcol: 203.0.113.5 — SSH brute force ×340 on 3 sensors in 10 min", then samples. */
export function slackSummary(summary: GroupSummary): string {
  const [headline, ...rest] = summaryLines(summary, (v) => chatText(v), slackLine);
  return [`threatcol: ${headline}`, ...rest].join('\n');
}
