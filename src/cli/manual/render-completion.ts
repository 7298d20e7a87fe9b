// The shell completion script for bash, zsh or fish, generated from the command tree.
import type { Command } from 'commander';
import { renderBashCompletion } from './completion-bash.js';
import { renderFishCompletion } from './completion-fish.js';
import { completionNodes } from './completion-model.js';
import { renderZshCompletion } from './completion-zsh.js';

export type Shell = 'bash' | 'zsh' | 'fish';

export function renderCompletion(program: Command, shell: Shell): string {
  const nodes = completionNodes(program);
  if (shell === 'bash') return renderBashCompletion(nodes);
  if (shell === 'zsh') return renderZshCompletion(nodes);
  return renderFishCompletion(nodes);
}
