// The human text of an alert (webhook format `slack`): counts by criticality, then the first records, one line
// each, short enough for a chat message (Slack, Mattermost, Teams accept the same `{"text": ...}`).
import type { OutgoingRecord } from './receiver.js';

export function slackMessage(batch: readonly OutgoingRecord[], quoted: number): string {
  const counts = new Map<number, number>();
  for (const { record } of batch) counts.set(record.criticality, (counts.get(record.criticality) ?? 0) + 1);
  const byLevel = [...counts]
    .sort((a, b) => b[0] - a[0])
    .map(([level, n]) => `${n} × criticality ${level}`)
    .join(', ');
  const lines = [`threatcol: ${batch.length} threat record${batch.length === 1 ? '' : 's'} (${byLevel})`];
  for (const { record: r } of batch.slice(0, quoted)) {
    lines.push(
      `• [${r.criticality}] ${r.threat} — ${r.src_ip} → ${r.dst_ip}:${r.dst_port}/${r.protocol} (sensor ${r.sensor}, ${r.received_at}, id ${r.id})`,
    );
  }
  if (batch.length > quoted) lines.push(`… and ${batch.length - quoted} more`);
  return lines.join('\n');
}
