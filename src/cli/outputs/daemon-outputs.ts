// Asks the running daemon's admin listener for its outputs' status (`GET /api/outputs`); null when no daemon
// answers, so `outputs list` falls back to the cursor files.
import type { LoadedConfig } from '../../config/load-config.js';
import type { OutputReport } from '../../outputs/start-outputs.js';
import { fetchAdminJson } from '../admin-get.js';

export async function fetchDaemonOutputs(
  loaded: LoadedConfig,
  timeoutMs = 2000,
): Promise<OutputReport[] | null> {
  const answer = (await fetchAdminJson(loaded, '/api/outputs', timeoutMs)) as {
    outputs?: OutputReport[];
  } | null;
  return answer?.outputs ?? null;
}
