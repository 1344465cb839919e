// STUB: replaced by the permits work (issue 3).
import type { ReplayStore } from './types.js';
export type { ReplayStore } from './types.js';
export interface RedisReplayStoreOptions { url?: string; client?: unknown; prefix?: string }
export function createRedisReplayStore(_options: RedisReplayStoreOptions): ReplayStore & { close(): Promise<void> } {
  throw new Error('not implemented');
}
