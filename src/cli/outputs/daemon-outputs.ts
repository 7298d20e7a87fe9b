// Asks the running daemon's admin listener for its outputs' status (`GET /api/outputs`). When no daemon is there
// `outputs list` falls back to the cursor files (state "stopped"); when one took the connection but did not answer
// in time, the states are unknown, never "stopped"; one that refused the token is no daemon missing either.
import type { LoadedConfig } from '../../config/load-config.js';
import type { OutputReport } from '../../outputs/start-outputs.js';
import { askAdmin, noAnswerText } from '../admin-get.js';

export type DaemonOutputs =
  | { kind: 'answered'; outputs: OutputReport[] }
  | { kind: 'none' }
  /** A daemon runs, and refused the token sent (401). */
  | { kind: 'refused' }
  /** `text`: "the collector did not answer in N s"; `seconds`: N. */
  | { kind: 'no-answer'; seconds: number; text: string };

export async function fetchDaemonOutputs(loaded: LoadedConfig): Promise<DaemonOutputs> {
  const answer = await askAdmin(loaded, '/api/outputs');
  if (answer.kind === 'no-answer') return { ...answer, text: noAnswerText(answer) };
  if (answer.kind === 'refused') return answer;
  const outputs =
    answer.kind === 'answered' ? (answer.body as { outputs?: OutputReport[] } | null)?.outputs : null;
  return Array.isArray(outputs) ? { kind: 'answered', outputs } : { kind: 'none' };
}
