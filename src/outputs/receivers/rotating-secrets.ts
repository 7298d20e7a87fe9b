// Secrets read at each send, for every receiver alike: a rotated token or password file is taken without a
// reload, a missing one pauses the output (AuthDeliveryError from readSecret), and the receiver built with the
// old secret is closed and built again only when a secret changed.
import type { Receiver } from './receiver.js';

export function withSecrets(
  read: () => (string | null)[],
  build: (secrets: (string | null)[]) => Receiver,
): Receiver {
  let current: { key: string; receiver: Receiver } | null = null;
  /** The receiver built with the secrets as they are now. */
  const receiver = async (): Promise<Receiver> => {
    const secrets = read();
    const key = JSON.stringify(secrets);
    if (current === null || current.key !== key) {
      await current?.receiver.close().catch(() => {});
      current = { key, receiver: build(secrets) };
    }
    return current.receiver;
  };
  return {
    async send(batch, signal) {
      return (await receiver()).send(batch, signal);
    },
    async sendSummaries(summaries, signal) {
      const now = await receiver();
      if (now.sendSummaries === undefined) throw new Error('this receiver sends no group summaries');
      return now.sendSummaries(summaries, signal);
    },
    readyAt: () => current?.receiver.readyAt?.() ?? 0,
    async close() {
      await current?.receiver.close();
      current = null;
    },
  };
}
