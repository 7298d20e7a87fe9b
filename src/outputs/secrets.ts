// An output's secrets: read from a file or an environment variable when needed, never from the configuration
// text, argv or the logs. A missing secret is a credential problem: the output pauses, it does not drop records.
import { readFileSync } from 'node:fs';
import { AuthDeliveryError } from './receivers/receiver.js';

/** The secret of `file` (trimmed) or of variable `env`; null when neither is configured. */
export function readSecret(
  kind: string,
  file: string | null,
  envName: string | null,
  env: Record<string, string | undefined>,
): string | null {
  if (file !== null) {
    try {
      const value = readFileSync(file, 'utf8').trim();
      if (value === '') throw new AuthDeliveryError(`the ${kind} file ${file} is empty`);
      return value;
    } catch (error) {
      if (error instanceof AuthDeliveryError) throw error;
      const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new AuthDeliveryError(`cannot read the ${kind} file ${file}: ${reason}`);
    }
  }
  if (envName !== null) {
    const value = env[envName]?.trim();
    if (!value) throw new AuthDeliveryError(`the environment variable ${envName} (${kind}) is not set`);
    return value;
  }
  return null;
}
