// What the build takes from the command tree: man pages, docs/cli.md and shell completions.
export { renderCompletion, type Shell } from './render-completion.js';
export { type ManMeta, type ManPage, renderManPages } from './render-man.js';
export { renderCliMarkdown } from './render-markdown.js';
