/**
 * Tool groups with `except` (docs/dev-pdp.md, "toolGroups"): a group matches a tool when one of its
 * patterns does and none of its `except` patterns does, so a policy can say "every tool but these" (a
 * tool result is untrusted unless its tool is trusted) and "these tools, but never the destroying ones"
 * (a grant for creating events never covers cancelling one).
 */
import { describe, expect, test } from 'vitest';
import { compilePolicy, InvalidPolicyError } from '../../src/policy.js';
import { compileToolGroups, originsOf } from '../../src/tool-groups.js';

describe('tool groups with except', () => {
  test('a group matches when a pattern does and no except pattern does', () => {
    const groups = compileToolGroups({
      untrusted: { tools: ['*'], except: ['get_balance', '*_my_*'] },
      calendar_create: { tools: ['*event*'], except: ['cancel_*', '*_cancel_*', 'delete_*'] },
    });
    const untrusted = groups.get('untrusted');
    const create = groups.get('calendar_create');
    expect(untrusted?.test('get_order_status')).toBe(true);
    expect(untrusted?.test('get_balance')).toBe(false);
    expect(untrusted?.test('read_my_notes')).toBe(false);
    expect(create?.test('create_calendar_event')).toBe(true);
    expect(create?.test('cancel_calendar_event')).toBe(false);
    expect(create?.test('bulk_cancel_event')).toBe(false);
    expect(create?.test('delete_event')).toBe(false);
  });

  test('an except group without origin has none; with one, it keeps it', () => {
    expect([...originsOf({ a: { tools: ['x'], except: ['y'] }, b: { tools: ['z'], origin: 'svc' } })]).toEqual([
      ['b', 'svc'],
    ]);
  });

  test('a policy with an except group compiles, and except must hold tool patterns', () => {
    const base = { agents: ['a'], latches: [{ id: 'l', stage: 'action', tool: '@g', verdict: 'ESCALATE' }] };
    expect(() => compilePolicy({ ...base, toolGroups: { g: { tools: ['*'], except: ['get_*'] } } })).not.toThrow();
    expect(() => compilePolicy({ ...base, toolGroups: { g: { tools: ['*'], except: ['Get Balance'] } } })).toThrow(
      InvalidPolicyError,
    );
    expect(() => compilePolicy({ ...base, toolGroups: { g: { tools: ['*'], except: [] } } })).toThrow(
      InvalidPolicyError,
    );
  });
});
