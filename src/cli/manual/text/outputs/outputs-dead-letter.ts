// Reference prose of `threatcol outputs dead-letter`.
import type { CommandManual } from '../../command-manual.js';

export const outputsDeadLetterManual: CommandManual = {
  description: `
\`\`\`sh
threatcol outputs dead-letter hook
threatcol outputs dead-letter hook --limit 200
threatcol outputs dead-letter hook --json | jq '.[].answer'
threatcol outputs dead-letter hook --retry
\`\`\`

Records the output's receiver refused for good are kept in \`outputs/NAME.dead-letter.ndjson\` in the data
directory (and the older parts it was rotated into, \`NAME.dead-letter.SEQ-PID.ndjson\`), one JSON line each:
\`{"at", "answer", "record"}\` (the time, the receiver's answer, the record as stored). They take at most the
output's \`deadLetterMaxBytes\` (default 256 MiB; the oldest are dropped beyond it) and are deleted after
\`store.retention.days\`.

Without options it prints the newest 20 as a table (\`--limit N\` for more, up to 100000) and how many there are
in all; \`--json\` prints them all, oldest first, as a JSON array with one dead letter a line (\`--limit N\`: the
newest N). Both read the files a line at a time, so a large history costs time, not memory. Every field of the
table is shown on one line: line breaks and control characters in a threat or an answer show as \`?\`.

\`--retry\` sends them again through the receiver, oldest first, in batches of the output's \`batch.maxRecords\`
and \`batch.maxBytes\`: the delivered ones leave, those refused again are written again with the new answer. It
first takes the files aside (\`….retrying-PID\`, then \`….retrying-PID-OFFSET\` as each batch is done), so the
daemon keeps writing new dead letters meanwhile and a retry that is killed loses nothing: the listing still
counts what it had not sent, and the next \`--retry\` takes it over from the last batch done (that batch may be
delivered twice; a record refused again is not written twice). A file taken is read to its end again a second
after it was taken, and only then deleted: a refusal the daemon was appending to it as it was taken is sent too.
When the receiver fails (down, a refused
credential) the retry stops and what it had not sent stays for the next one.
`,
  exitStatus: `Exit 69 (\`OUTPUT_FAILED\`) when \`--retry\` left records refused or the receiver failed.`,
};
