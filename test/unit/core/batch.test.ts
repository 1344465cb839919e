/**
 * How `authorizeActions` groups calls over AuthZEN (src/core/batch.ts): no `evaluations` request holds
 * two calls to one tool (a PDP may answer items that look alike as one), at most `max` calls a
 * request, and a lone call goes as a single evaluation.
 */
import { describe, expect, it } from 'vitest';
import { batchesOf, roundsByTool } from '../../../src/core/batch.js';
import type { Prepared } from '../../../src/core/request.js';

const call = (tool: string) => ({ sent: { tool } }) as unknown as Prepared;

describe('roundsByTool', () => {
  it("puts each tool's nth call in round n, in order", () => {
    expect(roundsByTool(['a', 'b', 'a', 'c', 'a', 'b'].map(call))).toEqual([[0, 1, 3], [2, 5], [4]]);
  });
});

describe('batchesOf', () => {
  it('cuts rounds into requests of at most max calls, and leaves a lone call out', () => {
    expect(batchesOf([[0, 1, 3], [2, 5], [4]], 64)).toEqual([
      [0, 1, 3],
      [2, 5],
    ]);
    expect(batchesOf([[0, 1, 2, 3, 4]], 2)).toEqual([
      [0, 1],
      [2, 3],
    ]);
  });
});
