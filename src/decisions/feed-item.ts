// One entry of a feed: a block and its network (DESIGN 15), as the selection, merging and rendering pass it on.
import type { Block } from '../store/decisions.js';
import type { Network } from './networks.js';

export interface FeedItem {
  block: Block;
  network: Network;
}
