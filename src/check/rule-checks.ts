// `check`'s blocklist rules line: a rule that blocked nothing for a week while records met its criteria is a
// warning (thresholds too high, an allow entry too wide, or only private addresses): the engine keeps each
// rule's newest matching record and newest block in the decisions store (decisions/rule-history.ts). And a rule
// whose duration blocklist.maxDuration cuts short (the configuration is valid: the cap is what the engine applies),
// and blocks held near blocklist.maxBlocks, past which the rules block no new address.
import { type BlocklistConfig, parseBlockDuration } from '../config/blocklist-schema.js';
import { blocksInForce, type DecisionsState } from '../store/decisions.js';
import type { CheckResult } from './local-checks.js';

export const QUIET_RULE_MS = 7 * 86_400_000;
/** Blocks held, as a share of blocklist.maxBlocks, from which `check` warns. */
const FULL_WARNING = 0.9;

/** null when no rule is configured. */
export function checkRules(
  state: DecisionsState,
  blocklist: BlocklistConfig,
  now: number,
): CheckResult | null {
  const rules = Object.keys(blocklist.rules);
  if (rules.length === 0) return null;
  const problems: string[] = [];
  // The engine caps every block at maxDuration, repeat offenders' too: a rule asking for more is cut short.
  const maxMs = parseBlockDuration(blocklist.maxDuration) ?? Number.POSITIVE_INFINITY;
  for (const name of [...rules].sort()) {
    const duration = blocklist.rules[name]?.duration ?? '';
    if ((parseBlockDuration(duration) ?? 0) > maxMs)
      problems.push(
        `rule ${name}: duration ${duration} is longer than blocklist.maxDuration (${blocklist.maxDuration}): its blocks last ${blocklist.maxDuration}`,
      );
  }
  // At blocklist.maxBlocks blocks in force the rules block no new address (engine.ts): said before it comes to that.
  const held = blocksInForce(state.blocks.values(), now).count;
  if (held >= blocklist.maxBlocks * FULL_WARNING)
    problems.push(
      `${held} blocks held of blocklist.maxBlocks ${blocklist.maxBlocks}: ${held >= blocklist.maxBlocks ? 'the rules block no new address' : 'at it, the rules block no new address'} until blocks end (raise it, or shorten the rules' durations)`,
    );
  for (const name of [...rules].sort()) {
    const entry = state.rules.get(name);
    // No history yet (the engine has not run with this rule), or no matching record this week.
    if (!entry || entry.lastMatch === null || now - Date.parse(entry.lastMatch) > QUIET_RULE_MS) continue;
    const lastBlock = entry.lastBlock ?? entry.since;
    if (now - Date.parse(lastBlock) <= QUIET_RULE_MS) continue;
    problems.push(
      `rule ${name} blocked nothing for 7 days (${entry.lastBlock === null ? `never, counting since ${entry.since}` : `last block ${entry.lastBlock}`}) while records met its criteria (the newest ${entry.lastMatch}): are its thresholds, the allow list or blocklist.blockPrivate keeping every address out?`,
    );
  }
  if (problems.length === 0)
    return {
      name: 'rules',
      status: 'ok',
      message: `${rules.length} rule(s): each blocked within 7 days, or no record met it; none longer than blocklist.maxDuration; ${held} of blocklist.maxBlocks ${blocklist.maxBlocks} blocks held`,
    };
  return { name: 'rules', status: 'warn', message: problems.join('; ') };
}
