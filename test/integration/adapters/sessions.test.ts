/**
 * One session rule, every entry (src/internal/session.ts; CONTRACT.md sections 2, 5, 8 and 16): the
 * per-call option, then the host's thread id, then the adapter's option, then the client's own
 * (`withSession`, else `createPep`). Each entry is driven against a recording fake PDP on 127.0.0.1, and
 * the session it sent is read off the request.
 */
import type { HookCallback } from '@anthropic-ai/claude-agent-sdk';
import { describe, expect, it } from 'vitest';
import { pepHooks } from '../../../src/adapters/claude-agent-sdk.js';
import { enforcementOf } from '../../../src/adapters/kit.js';
import { kernelOf } from '../../../src/enforce/registry.js';
import type { Pep } from '../../../src/index.js';
import { answer } from '../../support/fake-pdp.js';
import { useFakePdp } from '../../support/fake-pdp-suite.js';

const suite = useFakePdp({ permits: false });
const { clients } = suite;

/** The fake PDP allows everything, with a permit on actions (not verified: `permits: false`). */
function allowAll(): void {
  suite.pdp.handler = (req, res) =>
    answer(res, {
      verdict: 'ALLOW',
      requestId: req.body.requestId,
      stage: req.body.stage,
      ...(req.body.stage === 'action' ? { permitId: 'permit-1' } : {}),
    });
}

/** The sessions the PDP was asked in, in order. */
function sessionsSent(): unknown[] {
  return suite.pdp.received.map((r) => r.body.session);
}

describe('the stage methods and guardTool: the call option, else withSession, else createPep', () => {
  it('a stage method decides in the per-call session, else the bound one', async () => {
    allowAll();
    const pep = clients.client();
    await pep.checkInput('hi');
    await pep.withSession('sess_w').checkInput('hi');
    await pep.withSession('sess_w').checkInput('hi', { session: 'sess_c' });
    expect(sessionsSent()).toEqual(['sess_1', 'sess_w', 'sess_c']);
  });

  it("guardTool's execute learns the session it was decided in, the same as sent", async () => {
    allowAll();
    const seen: string[] = [];
    const tool = clients
      .client()
      .withSession('sess_w')
      .guardTool('lookup_order', (_args, ctx) => seen.push(ctx.session));
    await tool({ id: 1 });
    await tool({ id: 1 }, { session: 'sess_c' });
    expect(seen).toEqual(['sess_w', 'sess_c']);
    expect(sessionsSent()).toEqual(seen);
  });
});

describe('a wrapper of a client ({ ...pep }): its verified action carries the session it was decided in', () => {
  it("the wrapped client's session (withSession's), never an empty one", async () => {
    allowAll();
    const wrapper: Pep = { ...clients.client().withSession('sess_w') };
    const r = await enforcementOf(wrapper, 'test').decideAction('lookup_order', { id: 1 });
    expect(r.kind).toBe('verified');
    expect(r.kind === 'verified' ? r.session : undefined).toBe('sess_w');
  });

  it("the call's session when it names one", async () => {
    allowAll();
    const wrapper: Pep = { ...clients.client() };
    const r = await enforcementOf(wrapper, 'test').decideAction('lookup_order', { id: 1 }, { session: 'sess_c' });
    expect(r.kind === 'verified' ? r.session : undefined).toBe('sess_c');
    expect(sessionsSent()).toEqual(['sess_c']);
  });
});

describe('the enforcement layer reads per-call options once', () => {
  it('each option of a decideAction call is read once, whatever the outcome needs it for', async () => {
    allowAll();
    const reads: Record<string, number> = { session: 0, signal: 0 };
    const signal = new AbortController().signal;
    const opts = {};
    for (const [key, value] of Object.entries({ session: 'sess_c', signal })) {
      Object.defineProperty(opts, key, {
        enumerable: true,
        get() {
          reads[key] = (reads[key] ?? 0) + 1;
          return value;
        },
      });
    }
    const kernel = kernelOf(clients.client());
    const r = await kernel?.decideAction('lookup_order', { id: 1 }, opts);
    expect(r?.kind === 'verified' ? r.session : undefined).toBe('sess_c');
    expect(reads).toEqual({ session: 1, signal: 1 });
  });

  it('a bad per-call option is one observed refusal, invalid_request, with nothing sent', async () => {
    allowAll();
    const observed: unknown[] = [];
    const pep = clients.client({ onDecision: (e: { decision: unknown }) => observed.push(e.decision) });
    const r = await kernelOf(pep)?.decideAction('lookup_order', { id: 1 }, { session: '' });
    expect(r?.kind).toBe('refused');
    expect(r?.kind === 'refused' ? r.code : undefined).toBe('invalid_request');
    expect(observed).toHaveLength(1);
    expect(suite.pdp.received).toHaveLength(0);
  });
});

describe("the Claude Agent SDK's hooks: the conversation's session_id, else the client's", () => {
  async function preToolUse(pep: Pep, sessionId: unknown): Promise<unknown> {
    const hook = pepHooks(pep).PreToolUse?.[0]?.hooks[0] as HookCallback;
    const input = {
      hook_event_name: 'PreToolUse',
      session_id: sessionId,
      transcript_path: '/tmp/t',
      cwd: '/tmp',
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
      tool_use_id: 'tu_1',
    };
    const out = (await hook(input as never, 'tu_1', { signal: new AbortController().signal })) as {
      hookSpecificOutput?: { permissionDecision?: string };
    };
    return out.hookSpecificOutput?.permissionDecision;
  }

  it('decides in session_id when the host sends one, and in the client’s session when it is empty or blank', async () => {
    allowAll();
    const pep = clients.client();
    expect(await preToolUse(pep, 'conv_1')).toBe('allow');
    expect(await preToolUse(pep, '')).toBe('allow');
    expect(await preToolUse(pep, '   ')).toBe('allow');
    expect(sessionsSent()).toEqual(['conv_1', 'sess_1', 'sess_1']);
  });
});
