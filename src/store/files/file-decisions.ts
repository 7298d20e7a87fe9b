// The files backend's decisions: one document, `<dataDir>/decisions.json`, changed under the registry's kind of
// lock (CLI and daemon both write it) and written atomically (temporary file, fsync, rename, directory fsync).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Owner } from '../../data-dir/file-owner.js';
import { writeFileAtomic } from '../../data-dir/file-owner.js';
import { fileSignature, watchFiles } from '../../watch-files.js';
import {
  applyEntry,
  DECISION_KINDS,
  type DecisionsState,
  type DecisionsStore,
  decisionEntries,
  emptyDecisions,
} from '../decisions.js';
import { lockRegistry } from './registry-lock.js';

export const DECISIONS_FILE = 'decisions.json';
/** Feeds' password hashes are in it: the service user's only, as sensors.json. */
const DECISIONS_MODE = 0o600;

export function createFileDecisions(options: {
  dataDir: string;
  /** The data directory's owner, creating the directory on first use (only changes need it). */
  owner: () => Owner;
  pollIntervalMs: number;
}): DecisionsStore {
  const path = join(options.dataDir, DECISIONS_FILE);
  return {
    read: async () => readDocument(path),

    async apply(changes) {
      if (changes.length === 0) return;
      const owner = options.owner();
      const release = await lockRegistry(path);
      try {
        const state = readDocument(path);
        for (const change of changes) applyEntry(state, change.kind, change.key, change.value);
        writeFileAtomic(path, renderDocument(state), DECISIONS_MODE, owner);
      } finally {
        await release();
      }
    },

    // One collector per data directory: the engine's lease is always its own.
    lease: async () => true,

    watch(onState, onError) {
      let seen = '';
      const check = () => {
        const signature = fileSignature([path]);
        if (signature === seen) return;
        seen = signature;
        try {
          onState(readDocument(path));
        } catch (error) {
          // Seen again at the next change or poll.
          seen = '';
          onError(error as Error);
        }
      };
      check();
      const watch = watchFiles({ paths: [path], onChange: check, pollIntervalMs: options.pollIntervalMs });
      return { stop: () => watch.stop() };
    },
  };
}

/** The document's entries of the right shape; none when it does not exist yet. */
function readDocument(path: string): DecisionsState {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return emptyDecisions();
    throw error;
  }
  const state = emptyDecisions();
  const doc = JSON.parse(text) as { entries?: Record<string, Record<string, unknown>> };
  for (const kind of DECISION_KINDS) {
    const entries = doc.entries?.[kind];
    if (entries === null || typeof entries !== 'object') continue;
    for (const [key, value] of Object.entries(entries)) applyEntry(state, kind, key, value);
  }
  return state;
}

function renderDocument(state: DecisionsState): string {
  const entries: Record<string, Record<string, unknown>> = {};
  for (const kind of DECISION_KINDS) entries[kind] = {};
  for (const { kind, key, value } of decisionEntries(state))
    (entries[kind] as Record<string, unknown>)[key] = value;
  return `${JSON.stringify({ version: 1, entries })}\n`;
}
