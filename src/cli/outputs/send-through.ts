// Sends records through an output's real receiver once, outside the daemon (`outputs test`, dead letters
// `--retry`): the receiver's answer is the command's result.
import type { OutputConfig } from '../../config/outputs-schema.js';
import type { DeliveryReport } from '../../outputs/receivers/receiver.js';
import type { StoredRecord } from '../../records/stored-record.js';

export type SendOutcome = { ok: true; report: DeliveryReport } | { ok: false; error: string };

export async function sendThrough(
  output: OutputConfig,
  /** Read back whole (a sample): sent as the forwarder hands records over. */
  records: readonly StoredRecord[],
  env: Record<string, string | undefined>,
): Promise<SendOutcome> {
  const sender = await openSender(output, env);
  try {
    return await sender.send(records);
  } finally {
    await sender.close();
  }
}

export interface Sender {
  send(records: readonly StoredRecord[]): Promise<SendOutcome>;
  close(): Promise<void>;
}

/** One receiver for several sends (dead letters `--retry`, a batch at a time). */
export async function openSender(
  output: OutputConfig,
  env: Record<string, string | undefined>,
): Promise<Sender> {
  // Imported when sending: the receivers' clients (undici, nodemailer) stay out of every other command line.
  const [{ createReceiver }, { pino }] = await Promise.all([
    import('../../outputs/receivers/create-receiver.js'),
    import('pino'),
  ]);
  // A sample or dead letters: a receiver's warnings reach the user as its answer, not as log lines.
  const receiver = createReceiver(output, { env, logger: pino({ enabled: false }) });
  return {
    async send(records) {
      try {
        const outgoing = records.map((r) => ({ id: r.id, line: JSON.stringify(r), head: r, record: r }));
        const report = await receiver.send(outgoing, AbortSignal.timeout(output.timeoutMs + 1000));
        return { ok: true, report };
      } catch (error) {
        return { ok: false, error: failureText(error as Error) };
      }
    },
    close: () => receiver.close().catch(() => {}),
  };
}

/** The receiver's failure as a user reads it: its message and what the daemon would do, never a class name. */
function failureText(error: Error): string {
  // By name: the receiver classes stay out of every command line that does not send (imported when sending).
  if (error.name === 'TransientDeliveryError')
    return `${error.message} (a temporary failure: the daemon sends again, backing off)`;
  if (error.name === 'AuthDeliveryError')
    return `${error.message} (credentials refused: the daemon pauses the output and tries again slowly)`;
  return error.message;
}
