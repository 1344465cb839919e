// STUB: replaced by the permits work (issue 3).
import type { ReplayStore } from './types.js';
export interface MemoryReplayStoreOptions { maxEntries?: number }
export function createMemoryReplayStore(_options: MemoryReplayStoreOptions = {}): ReplayStore {
  throw new Error('not implemented');
}
