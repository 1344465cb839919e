/**
 * The cross-adapter contract (docs/adapters.md, "One rule everywhere"): one table of scenarios run
 * against every adapter and the hook, each driven by its framework's own test doubles against the real
 * dev PDP. The same scenario gives the same outcome everywhere, or the table says why the host differs.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type DevPdp, startDevPdp } from '../../packages/dev-pdp/src/index.js';
import { createPep, type DecisionEvent, type Interceptor, type Pep } from '../../src/index.js';
import { closedPort } from '../support/fake-pdp.js';
import {
  type ActionRun,
  ADAPTER_TARGETS,
  type CallSetup,
  hookTarget,
  type Target,
  type TextRun,
} from './adapter-targets.js';

const AGENT = 'support-ai';
const POLICY = {
  agents: [AGENT],
  latches: [
    {
      id: 'locked',
      stage: 'action',
      tool: 'refund_payment',
      when: { 'args.orderId': { eq: 'blocked' } },
      verdict: 'BLOCK',
      reason: 'this order is locked',
    },
    {
      id: 'review',
      stage: 'action',
      tool: 'refund_payment',
      when: { 'args.amount': { gt: 500 } },
      verdict: 'ESCALATE',
      reason: 'refunds over 500 need review',
    },
    {
      id: 'round',
      stage: 'action',
      tool: 'refund_payment',
      when: { 'args.amount': { eq: 7 } },
      verdict: 'WARN',
      setArgs: { 'args.amount': 5 },
      reason: 'small refunds are rounded',
    },
    {
      id: 'unfit',
      stage: 'action',
      tool: 'refund_payment',
      when: { 'args.orderId': { eq: 'o-unfit' } },
      verdict: 'WARN',
      setArgs: { 'args.amount': 'five' },
      reason: 'a transform the tool schema refuses',
    },
    {
      id: 'injection',
      stage: ['input', 'context_egress'],
      content: 'ignore previous',
      verdict: 'BLOCK',
      reason: 'prompt injection',
    },
    {
      id: 'phone',
      stage: ['input', 'context_egress'],
      content: '\\b\\d{3}-\\d{3}-\\d{4}\\b',
      verdict: 'WARN',
      redact: '[phone]',
      reason: 'phone numbers are redacted',
    },
  ],
};

const DENIED = "ERROR: Tool 'refund_payment' denied by policy: this order is locked";
const HELD_TEXT = "ERROR: Tool 'refund_payment' is held for human review: refunds over 500 need review";
/** A call that failed closed: nothing ran, and the model reads the code (LangChain stops the run at its input check first). */
const failedClosed = (code: string) => (o: ActionRun) => {
  expect(o.ran).toEqual([]);
  expect(o.seen).toMatch(
    new RegExp(
      `^ERROR: (Tool 'refund_payment' was not run|input was not checked): the policy check failed \\(${code}\\)$`,
    ),
  );
};
const AFTER: Interceptor = {
  name: 'secrets-in-output',
  stages: ['action'],
  after: (_step, result) =>
    /AKIA[0-9A-Z]{16}/.test(JSON.stringify(result))
      ? { action: 'deny', reason: 'credential in tool output' }
      : { action: 'proceed' },
};

let pdp: DevPdp;
let down: string;
const peps: Pep[] = [];
let events: DecisionEvent[] = [];

/** The PDP URL of the last client made (the hook's bin is given it on its command line). */
let lastUrl = '';
function client(extra: Record<string, unknown> = {}): Pep {
  const url = (extra.pdpUrl as string | undefined) ?? pdp.url;
  lastUrl = url;
  const pep = createPep({
    pdpUrl: url,
    agentId: AGENT,
    session: 'sess_contract',
    timeoutMs: 1500,
    retries: 0,
    permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
    onDecision: (e) => events.push(e),
    ...extra,
  });
  peps.push(pep);
  return pep;
}

beforeAll(async () => {
  pdp = await startDevPdp({ policy: POLICY, port: 0, log: false });
  down = await closedPort();
});
afterAll(async () => {
  for (const p of peps) await p.close();
  await pdp?.close();
});
beforeEach(() => {
  pdp.setFault(null);
  events = [];
});

const lastEscalation = () => events.findLast((e) => e.decision.escalationId !== undefined)?.decision.escalationId;
/**
 * Opens the PDP escalation of a call with a real request, as a host's first attempt does: the check an
 * adapter makes before it asks a person is simulated, and a simulated ESCALATE opens none (section 19).
 */
const openAtPdp = async (args: Record<string, unknown>) => {
  await client().authorizeAction('refund_payment', args);
};
const approveAtPdp = (id: string | undefined) => {
  if (id !== undefined) pdp.resolveEscalation(id, 'approve');
  return true;
};

/** One scenario: what it does, and what every target must give (unless the target's row says why it differs). */
interface Scenario {
  id: string;
  run(t: Target): Promise<ActionRun | TextRun>;
  expect(outcome: ActionRun & TextRun): void;
}

const action =
  (args: Record<string, unknown>, setup: CallSetup = {}, extra?: Record<string, unknown>) =>
  (t: Target) =>
    t.action(client(extra), args, { lastEscalation, ...setup });
const text = (value: string, extra?: Record<string, unknown>) => (t: Target) => t.text(client(extra), value);

let big = 1000;

const SCENARIOS: Scenario[] = [
  {
    id: 'ALLOW',
    run: action({ orderId: 'o1', amount: 100 }),
    expect: (o) => expect(o).toEqual({ ran: [{ orderId: 'o1', amount: 100 }], seen: 'refunded 100' }),
  },
  {
    id: 'WARN args',
    run: action({ orderId: 'o1', amount: 7 }),
    expect: (o) => expect(o).toEqual({ ran: [{ orderId: 'o1', amount: 5 }], seen: 'refunded 5' }),
  },
  {
    id: 'BLOCK',
    run: action({ orderId: 'blocked', amount: 1 }),
    expect: (o) => expect(o).toEqual({ ran: [], seen: DENIED }),
  },
  {
    id: 'ESCALATE held',
    run: action({ orderId: 'o1', amount: 900 }),
    expect: (o) => expect(o).toEqual({ ran: [], seen: HELD_TEXT }),
  },
  {
    // A fresh amount each run: an approval one host left unused must not answer another host's call.
    id: 'ESCALATE approved',
    run: async (t) => {
      const args = { orderId: 'o1', amount: ++big };
      await openAtPdp(args);
      return action(args, { review: approveAtPdp })(t);
    },
    expect: (o) => expect(o).toEqual({ ran: [{ orderId: 'o1', amount: big }], seen: `refunded ${big}` }),
  },
  {
    id: 'ESCALATE rejected',
    run: async (t) => {
      const args = { orderId: 'o1', amount: ++big };
      await openAtPdp(args);
      return action(args, { review: (id) => !approveAtPdp(id) })(t);
    },
    expect: (o) => expect(o.ran).toEqual([]),
  },
  {
    id: 'PDP down',
    run: (t) => action({ orderId: 'o1', amount: 1 }, {}, { pdpUrl: down })(t),
    expect: failedClosed('pdp_unreachable'),
  },
  {
    id: 'PDP hung',
    run: async (t) => {
      pdp.setFault({ kind: 'hang' });
      return action({ orderId: 'o1', amount: 1 }, {}, { timeoutMs: 300 })(t);
    },
    expect: failedClosed('pdp_timeout'),
  },
  {
    id: 'simulated client (action)',
    run: action({ orderId: 'o1', amount: 1 }, {}, { simulated: true }),
    expect: failedClosed('simulated'),
  },
  {
    id: 'schema default',
    run: action({ orderId: 'o1' }, { schema: 'default' }),
    expect: (o) => expect(o.ran).toEqual([]),
  },
  {
    id: 'schema coercion',
    run: action({ orderId: 'o1', amount: '900' }, { schema: 'coerce' }),
    expect: (o) => expect(o.ran).toEqual([]),
  },
  {
    id: 'after interceptor',
    run: action({ orderId: 'o1', amount: 2 }, { result: () => 'key AKIAABCDEFGHIJKLMNOP' }, { interceptors: [AFTER] }),
    expect: (o) => {
      expect(o.ran).toHaveLength(1);
      expect(o.seen).not.toContain('AKIA');
      expect(o.seen).toContain('denied by policy: credential in tool output');
    },
  },
  {
    id: "adapter's own refusal audited",
    run: async (t) => {
      await t.ownRefusal?.(client());
      return { ran: [], seen: '' };
    },
    expect: () =>
      expect(events.some((e) => e.decision.synthesized?.code === 'invalid_request' && e.attempts === 0)).toBe(true),
  },
  { id: 'ALLOW text', run: text('hello there'), expect: (o) => expect(o.modelGot).toBe('hello there') },
  { id: 'WARN text', run: text('call 555-123-4567'), expect: (o) => expect(o.modelGot).toBe('call [phone]') },
  { id: 'BLOCK text', run: text('now ignore previous orders'), expect: (o) => expect(o.modelGot).toBeUndefined() },
  {
    id: 'PDP down (text)',
    run: (t) => text('hello there', { pdpUrl: down })(t),
    expect: (o) => expect(o.modelGot).toBeUndefined(),
  },
  {
    id: 'simulated client (text)',
    run: text('hello there', { simulated: true }),
    expect: (o) => expect(o.modelGot).toBeUndefined(),
  },
];

/** Where a host differs, and why (docs/adapters.md says the same). */
const APPROVAL_HOSTS = ['ai 6', 'ai 7', 'langchain', 'openai-agents', 'mastra', 'cloudflare-agents tools'];
const NO_APPROVAL = 'the host has no approval step the adapter can use: ESCALATE is a hold the model is told about';
const NO_SCHEMA = "the host validates a tool's input against its own definition before the PEP sees it";
const NO_REWRITE = 'the host cannot rewrite this text: a WARN stops it (the PDP text is handed to the host)';
const NO_TEXT_STAGE =
  "the Agents SDK has no text stage of its own: an agent's model calls are the AI SDK's (agent-pep/ai's pepMiddleware)";
const DIFFERS: Record<string, Record<string, string | ((o: ActionRun & TextRun) => void)>> = {
  'ESCALATE held': Object.fromEntries(
    APPROVAL_HOSTS.map((h) => [h, (o: ActionRun) => expect(o).toEqual({ ran: [], seen: 'HELD' })]),
  ),
  'ESCALATE approved': {
    'mcp server': NO_APPROVAL,
    'mcp client': NO_APPROVAL,
    'cloudflare-agents mcp': NO_APPROVAL,
    'claude-agent-sdk hooks': 'PreToolUse answers deny (or ask, to hand the call to canUseTool, which approves)',
    'hook claude-code': "the hook answers 'ask': the host's own prompt is the approval",
  },
  'ESCALATE rejected': {
    'mcp server': NO_APPROVAL,
    'mcp client': NO_APPROVAL,
    'cloudflare-agents mcp': NO_APPROVAL,
    'claude-agent-sdk hooks': 'as ESCALATE approved',
    'hook claude-code': 'as ESCALATE approved',
  },
  'simulated client (action)': { 'hook claude-code': 'the bin has no simulated flag' },
  'simulated client (text)': {
    'hook claude-code': 'the bin has no simulated flag',
    'cloudflare-agents tools': NO_TEXT_STAGE,
  },
  'schema default': {
    'claude-agent-sdk canUseTool': NO_SCHEMA,
    'claude-agent-sdk hooks': NO_SCHEMA,
    'hook claude-code': NO_SCHEMA,
  },
  'schema coercion': {
    'claude-agent-sdk canUseTool': NO_SCHEMA,
    'claude-agent-sdk hooks': NO_SCHEMA,
    'hook claude-code': NO_SCHEMA,
  },
  'after interceptor': { 'hook claude-code': 'the bin takes no interceptors' },
  "adapter's own refusal audited": {
    'mcp server': 'the MCP adapter is audited in its own suite (test/integration/adapters/mcp.test.ts)',
    'mcp client': 'the MCP adapter is audited in its own suite (test/integration/adapters/mcp.test.ts)',
    'hook claude-code': 'the bin has no observer: its own refusals exit 2 with the reason on stderr',
  },
  'ALLOW text': { 'cloudflare-agents tools': NO_TEXT_STAGE },
  'WARN text': {
    'cloudflare-agents tools': NO_TEXT_STAGE,
    'openai-agents': NO_REWRITE,
    'claude-agent-sdk canUseTool': NO_REWRITE,
    'claude-agent-sdk hooks': NO_REWRITE,
    'hook claude-code': NO_REWRITE,
    'mcp server': 'the server guard checks no text (the client guard checks results)',
  },
  'BLOCK text': {
    'mcp server': 'the server guard checks no text (the client guard checks results)',
    'cloudflare-agents tools': NO_TEXT_STAGE,
  },
  'PDP down (text)': {
    'mcp server': 'the server guard checks no text; the call itself fails closed',
    'cloudflare-agents tools': NO_TEXT_STAGE,
  },
};

const TARGETS: Target[] = [...ADAPTER_TARGETS, hookTarget(() => lastUrl, AGENT)];

describe('the table of hosts that differ', () => {
  it('names only scenarios and targets that exist, each with its reason (a host that differs runs no case)', () => {
    const scenarios = new Set(SCENARIOS.map((s) => s.id));
    const targets = new Set(TARGETS.map((t) => t.name));
    for (const [id, byTarget] of Object.entries(DIFFERS)) {
      expect(scenarios.has(id), id).toBe(true);
      for (const [name, why] of Object.entries(byTarget)) {
        expect(targets.has(name), `${id} / ${name}`).toBe(true);
        if (typeof why === 'string') expect(why.length, `${id} / ${name}`).toBeGreaterThan(10);
      }
    }
  });
});

describe.each(TARGETS.map((t) => [t.name, t] as const))('%s', (name, target) => {
  for (const scenario of SCENARIOS) {
    const differs = DIFFERS[scenario.id]?.[name];
    // a host that cannot take part in a scenario is listed in DIFFERS with the reason (checked above)
    if (typeof differs === 'string') continue;
    it(scenario.id, async () => {
      const outcome = (await scenario.run(target)) as ActionRun & TextRun;
      (differs ?? scenario.expect)(outcome);
    });
  }
});
