/**
 * The targets of the cross-adapter contract suite (adapters.contract.test.ts): every adapter and the
 * hook, each driven through its own framework's test doubles, reduced to one shape: a model proposes
 * `refund_payment` with some args (what ran, and what the model then reads), and a user's text reaches
 * the first text stage the host has (what the model then got).
 */
import type { PostToolUseHookInput, PreToolUseHookInput, SyncHookJSONOutput } from '@anthropic-ai/claude-agent-sdk';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { Command, MemorySaver } from '@langchain/langgraph';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Agent, tool as oaTool, RunState, run } from '@openai/agents';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents/testing';
import * as ai6 from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import * as ai7 from 'ai-v7';
import { MockLanguageModelV4 } from 'ai-v7/test';
import { createAgent, fakeModel, tool as lcTool } from 'langchain';
import { z } from 'zod';
import { guardTools as aiGuardTools, pepMiddleware as aiMiddleware } from '../../src/adapters/ai.js';
import { pepCanUseTool, pepHooks } from '../../src/adapters/claude-agent-sdk.js';
import { pepMiddleware as lcMiddleware } from '../../src/adapters/langchain.js';
import { guardMcpClient, guardMcpServer, SESSION_META_KEY } from '../../src/adapters/mcp.js';
import { guardTools as oaGuardTools, pepInputGuardrail } from '../../src/adapters/openai-agents.js';
import type { Pep } from '../../src/index.js';
import { runInProcess } from '../support/cli.js';
import { cloudflareMcpTarget, cloudflareToolsTarget } from './targets-cloudflare-agents.js';
import { mastraTarget } from './targets-mastra.js';

/** How the tool's schema reads the args: as written, with `amount` defaulting to 900, or `amount` coerced to a number. */
export type SchemaKind = 'plain' | 'default' | 'coerce';

/** What a tool call came to. */
export interface ActionRun {
  /** The args of each run of the tool body. */
  ran: Record<string, unknown>[];
  /** What the model reads for the call: the tool's result, or the denial text. */
  seen: string;
}

/** What a user's text came to. */
export interface TextRun {
  /** The text the model received, or undefined when it was not called. */
  modelGot: string | undefined;
}

export interface CallSetup {
  schema?: SchemaKind;
  /** A host approval step for a held call: resolves the PDP's escalation (or not) and says yes or no. */
  review?: (escalationId: string | undefined) => boolean;
  /** The escalation the PDP last opened (from the client's observer). */
  lastEscalation?: () => string | undefined;
  /** The tool body's result. */
  result?: (args: Record<string, unknown>) => unknown;
}

export interface Target {
  name: string;
  action(pep: Pep, args: Record<string, unknown>, setup?: CallSetup): Promise<ActionRun>;
  text(pep: Pep, text: string): Promise<TextRun>;
  /** Makes the adapter refuse a call itself (no decision could be made); resolves when done. */
  ownRefusal?(pep: Pep): Promise<void>;
}

const TOOL = 'refund_payment';

function zodShape(kind: SchemaKind = 'plain') {
  const amount = kind === 'default' ? z.number().default(900) : kind === 'coerce' ? z.coerce.number() : z.number();
  return { orderId: z.string(), amount };
}

const defaultResult = (args: Record<string, unknown>) => `refunded ${String(args.amount)}`;
const asText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

// ---------------------------------------------------------------- Vercel AI SDK 6 and 7

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
const aiCall = (input: Record<string, unknown>) => ({
  content: [{ type: 'tool-call', toolCallId: 'c1', toolName: TOOL, input: JSON.stringify(input) }],
  finishReason: { unified: 'tool-calls', raw: undefined },
  usage,
  warnings: [],
});
const aiAnswer = (text: string) => ({
  content: [{ type: 'text', text }],
  finishReason: { unified: 'stop', raw: undefined },
  usage,
  warnings: [],
});

interface AiPrompt {
  role: string;
  content: string | { type: string; text?: string; output?: { type: string; value?: unknown; reason?: string } }[];
}

function aiToolOutput(prompt: AiPrompt[] | undefined): string {
  for (const m of prompt ?? []) {
    if (m.role !== 'tool' || !Array.isArray(m.content)) continue;
    for (const p of m.content) {
      if (p.type !== 'tool-result') continue;
      const o = p.output;
      if (o?.type === 'execution-denied') return `denied: ${o.reason ?? ''}`;
      return asText(o?.value);
    }
  }
  return '(no tool result)';
}

function aiTarget(major: 6 | 7): Target {
  // biome-ignore lint/suspicious/noExplicitAny: the two majors' modules, used through the same calls
  const sdk: any = major === 6 ? ai6 : ai7;
  const Mock = major === 6 ? MockLanguageModelV3 : MockLanguageModelV4;
  return {
    name: `ai ${major}`,
    async action(pep, args, setup = {}) {
      const ran: Record<string, unknown>[] = [];
      const tools = aiGuardTools(pep, {
        [TOOL]: sdk.tool({
          inputSchema: z.object(zodShape(setup.schema)),
          execute: async (a: Record<string, unknown>) => {
            ran.push(a);
            return (setup.result ?? defaultResult)(a);
          },
        }),
      });
      const model = new Mock({ doGenerate: [aiCall(args), aiAnswer('done'), aiAnswer('done')] as never });
      const messages: unknown[] = [{ role: 'user', content: 'refund' }];
      const first = await sdk.generateText({ model, tools, messages, stopWhen: sdk.stepCountIs(3) });
      const request = first.content.find((p: { type: string }) => p.type === 'tool-approval-request');
      if (request === undefined || setup.review === undefined) {
        const seen = request ? 'HELD' : aiToolOutput(model.doGenerateCalls[1]?.prompt);
        return { ran, seen };
      }
      const approved = setup.review(setup.lastEscalation?.());
      const response = { type: 'tool-approval-response', approvalId: request.approvalId, approved };
      await sdk.generateText({
        model,
        tools,
        messages: [...messages, ...first.response.messages, { role: 'tool', content: [response] }],
        stopWhen: sdk.stepCountIs(3),
      });
      return { ran, seen: aiToolOutput(model.doGenerateCalls.at(-1)?.prompt) };
    },
    async text(pep, text) {
      const model = new Mock({ doGenerate: [aiAnswer('ok')] as never });
      const wrapped = sdk.wrapLanguageModel({ model, middleware: aiMiddleware(pep) });
      try {
        await sdk.generateText({ model: wrapped, prompt: text });
      } catch {
        // refused: the model was not called
      }
      const prompt = model.doGenerateCalls[0]?.prompt as AiPrompt[] | undefined;
      const user = prompt?.find((m) => m.role === 'user');
      const got = Array.isArray(user?.content) ? user.content.map((p) => p.text ?? '').join('') : user?.content;
      return { modelGot: got };
    },
    async ownRefusal(pep) {
      // The PDP's WARN (setArgs amount: 'five') gives args the tool's schema refuses: the adapter refuses them.
      await this.action(pep, { orderId: 'o-unfit', amount: 3 });
    },
  };
}

// ---------------------------------------------------------------- LangChain

let threads = 0;

const langchain: Target = {
  name: 'langchain',
  async action(pep, args, setup = {}) {
    const ran: Record<string, unknown>[] = [];
    const t = lcTool(
      async (a: Record<string, unknown>) => {
        ran.push(a);
        return asText((setup.result ?? defaultResult)(a));
      },
      { name: TOOL, description: 'Refund', schema: z.object(zodShape(setup.schema)) },
    );
    const model = fakeModel()
      .respondWithTools([{ name: TOOL, args, id: 'c1' }])
      .respond(new AIMessage('done'))
      .respond(new AIMessage('done'));
    const agent = createAgent({ model, tools: [t], middleware: [lcMiddleware(pep)], checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: `contract-${++threads}` } };
    let result = await agent.invoke({ messages: [new HumanMessage('refund')] }, config);
    const interrupted = (result as { __interrupt__?: unknown[] }).__interrupt__?.length;
    if (interrupted) {
      if (setup.review === undefined) return { ran, seen: 'HELD' };
      const approve = setup.review(setup.lastEscalation?.());
      const decision = approve ? { type: 'approve' } : { type: 'reject' };
      result = await agent.invoke(new Command({ resume: { decisions: [decision] } }), config);
    }
    const message = result.messages.find((m): m is ToolMessage => ToolMessage.isInstance(m));
    // No tool result: the run stopped before the model proposed the call (its input failed closed).
    return { ran, seen: asText((message ?? result.messages.at(-1))?.content) };
  },
  async text(pep, text) {
    const model = fakeModel().respond(new AIMessage('ok'));
    const agent = createAgent({ model, tools: [], middleware: [lcMiddleware(pep)] });
    await agent.invoke(
      { messages: [new HumanMessage(text)] },
      { configurable: { thread_id: `contract-${++threads}` } },
    );
    const sent = model.calls?.[0]?.messages as { content: unknown }[] | undefined;
    const got = sent?.find((m) => HumanMessage.isInstance(m));
    return { modelGot: got === undefined ? undefined : asText(got.content) };
  },
  async ownRefusal(pep) {
    let n = 0;
    const t = lcTool(async () => 'never', {
      name: TOOL,
      description: 'Refund',
      schema: z.object({ orderId: z.string(), amount: z.number().default(() => ++n * 400) }),
    });
    const model = fakeModel()
      .respondWithTools([{ name: TOOL, args: { orderId: 'o1' }, id: 'c1' }])
      .respond(new AIMessage('done'));
    const agent = createAgent({ model, tools: [t], middleware: [lcMiddleware(pep)] });
    await agent.invoke(
      { messages: [new HumanMessage('refund')] },
      { configurable: { thread_id: `contract-${++threads}` } },
    );
  },
};

// ---------------------------------------------------------------- OpenAI Agents

function oaResult(input: unknown[] | undefined): string {
  for (const item of input ?? []) {
    const i = item as { type?: string; output?: unknown };
    if (i.type !== 'function_call_result') continue;
    const out = i.output as { text?: unknown } | string;
    return typeof out === 'string' ? out : typeof out?.text === 'string' ? out.text : JSON.stringify(out);
  }
  return '(no tool result)';
}

const openai: Target = {
  name: 'openai-agents',
  async action(pep, args, setup = {}) {
    const ran: Record<string, unknown>[] = [];
    const t = oaTool({
      name: TOOL,
      description: 'Refund',
      parameters: z.object(zodShape(setup.schema)),
      execute: async (a: Record<string, unknown>) => {
        ran.push(a);
        return asText((setup.result ?? defaultResult)(a));
      },
    });
    const model = new ScriptedModel([
      [functionCall(TOOL, args, { callId: 'call_1' })],
      [assistantMessage('done')],
      [assistantMessage('done')],
    ]);
    const agent = new Agent({ name: 'support', instructions: 'Help.', model, tools: oaGuardTools(pep, [t]) });
    const result = await run(agent, 'refund');
    if (result.interruptions.length > 0) {
      if (setup.review === undefined) return { ran, seen: 'HELD' };
      const approve = setup.review(setup.lastEscalation?.());
      const state = await RunState.fromString(agent, result.state.toString());
      const item = state.getInterruptions()[0] as never;
      if (approve) state.approve(item);
      else state.reject(item);
      await run(agent, state);
    }
    return { ran, seen: oaResult(model.lastCall?.request.input as unknown[] | undefined) };
  },
  async text(pep, text) {
    const model = new ScriptedModel([[assistantMessage('ok')]]);
    const agent = new Agent({ name: 'support', model, inputGuardrails: [pepInputGuardrail(pep)] });
    try {
      await run(agent, text);
    } catch {
      // the wire tripped: the model was not called
    }
    const input = model.calls[0]?.request.input;
    if (input === undefined || typeof input === 'string') return { modelGot: input };
    const user = (input as { role?: string; content?: unknown }[]).find((i) => i.role === 'user');
    return { modelGot: typeof user?.content === 'string' ? user.content : JSON.stringify(user?.content) };
  },
  async ownRefusal(pep) {
    const t = oaTool({
      name: TOOL,
      description: 'Refund',
      parameters: z.object(zodShape()),
      execute: async () => 'never',
    });
    const [guarded] = oaGuardTools(pep, [t]);
    // Arguments that are not JSON: the adapter refuses them before any decision.
    await (guarded as { invoke: (c: unknown, i: string) => Promise<unknown> }).invoke({}, '{not json');
  },
};

// ---------------------------------------------------------------- MCP (server and client guards, public exports)

interface McpResult {
  isError?: boolean;
  content: { type: string; text?: string }[];
}

/**
 * A server with the one tool and a client on an in-memory pair. `guard` runs before the tool is registered
 * (the server declares the tools capability, and the tool's handle goes into the record the guard serves):
 * every case below holds for a tool registered after guarding.
 */
async function mcpPair(
  setup: CallSetup,
  ran: Record<string, unknown>[],
  guard?: (server: McpServer, tools: Record<string, RegisteredTool>) => void,
) {
  const server = new McpServer({ name: 'payments', version: '1.0.0' }, guard ? { capabilities: { tools: {} } } : {});
  const tools: Record<string, RegisteredTool> = {};
  guard?.(server, tools);
  tools[TOOL] = server.registerTool(
    TOOL,
    { inputSchema: zodShape(setup.schema) },
    async (a: Record<string, unknown>) => {
      ran.push(a);
      return { content: [{ type: 'text' as const, text: asText((setup.result ?? defaultResult)(a)) }] };
    },
  );
  const client = new Client({ name: 'agent', version: '1.0.0' });
  const [c, s] = InMemoryTransport.createLinkedPair();
  // The client side connects through the transport guardMcpClient returns (`wrap`).
  const connect = (wrap: (t: InMemoryTransport) => Parameters<Client['connect']>[0] = (t) => t) =>
    Promise.all([server.connect(s), client.connect(wrap(c))]);
  return { server, client, connect };
}

/** The server side guards its server before any tool is registered; the client side guards its transport. */
function serverGuard(
  side: 'server' | 'client',
  pep: Pep,
): ((server: McpServer, tools: Record<string, RegisteredTool>) => void) | undefined {
  return side === 'server' ? (server, tools) => guardMcpServer(pep, server, { tools }) : undefined;
}

/** The policy session an agent's request names (CONTRACT section 16): a guarded server decides in it. */
/** The session of the suite's clients (adapters.contract.test.ts). */
export const CONTRACT_SESSION = 'sess_contract';
const inSession = { [SESSION_META_KEY]: CONTRACT_SESSION };

function mcpTarget(side: 'server' | 'client'): Target {
  return {
    name: `mcp ${side}`,
    async action(pep, args, setup = {}) {
      const ran: Record<string, unknown>[] = [];
      const { client, connect } = await mcpPair(setup, ran, serverGuard(side, pep));
      await connect(side === 'client' ? (t) => guardMcpClient(pep, t) : undefined);
      try {
        const r = (await client.callTool({ name: TOOL, arguments: args, _meta: inSession })) as McpResult;
        return { ran, seen: r.content.map((p) => p.text ?? '').join('\n') };
      } finally {
        await client.close();
      }
    },
    async text(pep, text) {
      // MCP has no user text: the text stage it checks is a tool's result (client guard, context_egress).
      const ran: Record<string, unknown>[] = [];
      const { client, connect } = await mcpPair({ result: () => text }, ran, serverGuard(side, pep));
      await connect(side === 'client' ? (t) => guardMcpClient(pep, t) : undefined);
      try {
        const r = (await client.callTool({
          name: TOOL,
          arguments: { orderId: 'o-text', amount: 1 },
          _meta: inSession,
        })) as McpResult;
        return { modelGot: r.isError ? undefined : r.content.map((p) => p.text ?? '').join('\n') };
      } finally {
        await client.close();
      }
    },
  };
}

// ---------------------------------------------------------------- Claude Agent SDK (canUseTool and hooks)

const hookBase = { session_id: 'sess_claude', transcript_path: '/tmp/t', cwd: '/tmp' };
const signal = () => new AbortController().signal;

/** The host's part, as the SDK plays it: PreToolUse, the tool, then PostToolUse with its output. */
async function claudeRun(pep: Pep, args: Record<string, unknown>, setup: CallSetup, via: 'hooks' | 'canUseTool') {
  const ran: Record<string, unknown>[] = [];
  const hooks = pepHooks(pep);
  let input: Record<string, unknown>;
  if (via === 'canUseTool') {
    const approver = setup.review
      ? { approve: (c: { escalationId: string | undefined }) => setup.review?.(c.escalationId) === true }
      : undefined;
    const r = (await pepCanUseTool(pep, approver ? { approver } : undefined)(TOOL, args, {
      signal: signal(),
      toolUseID: 'toolu_1',
    } as never)) as { behavior: string; message?: string; updatedInput?: Record<string, unknown> };
    if (r.behavior === 'deny') return { ran, seen: r.message ?? '' };
    input = r.updatedInput ?? args;
  } else {
    const pre: PreToolUseHookInput = {
      ...hookBase,
      hook_event_name: 'PreToolUse',
      tool_name: TOOL,
      tool_input: args,
      tool_use_id: 'toolu_1',
    };
    const out = (await hooks.PreToolUse?.[0]?.hooks[0]?.(pre, 'toolu_1', { signal: signal() })) as SyncHookJSONOutput;
    const o = out.hookSpecificOutput as {
      permissionDecision?: string;
      permissionDecisionReason?: string;
      updatedInput?: Record<string, unknown>;
    };
    if (o.permissionDecision !== 'allow') return { ran, seen: o.permissionDecisionReason ?? '' };
    input = o.updatedInput ?? args;
  }
  ran.push(input);
  const response = (setup.result ?? defaultResult)(input);
  const post: PostToolUseHookInput = {
    ...hookBase,
    hook_event_name: 'PostToolUse',
    tool_name: TOOL,
    tool_input: input,
    tool_response: response,
    tool_use_id: 'toolu_1',
  } as PostToolUseHookInput;
  const out = (await hooks.PostToolUse?.[0]?.hooks[0]?.(post, 'toolu_1', { signal: signal() })) as SyncHookJSONOutput;
  const replaced = (out.hookSpecificOutput as { updatedToolOutput?: unknown } | undefined)?.updatedToolOutput;
  if (out.decision === 'block') return { ran, seen: `${out.reason ?? ''} | ${asText(replaced)}` };
  return { ran, seen: asText(replaced ?? response) };
}

function claudeTarget(via: 'hooks' | 'canUseTool'): Target {
  return {
    name: `claude-agent-sdk ${via}`,
    action: (pep, args, setup = {}) => claudeRun(pep, args, setup, via),
    async text(pep, text) {
      const out = (await pepHooks(pep).UserPromptSubmit?.[0]?.hooks[0]?.(
        { ...hookBase, hook_event_name: 'UserPromptSubmit', prompt: text },
        undefined,
        { signal: signal() },
      )) as SyncHookJSONOutput;
      return { modelGot: out.decision === 'block' ? undefined : text };
    },
    async ownRefusal(pep) {
      await pepCanUseTool(pep)(TOOL, 'not an object' as never, { signal: signal(), toolUseID: 't' } as never);
    },
  };
}

// ---------------------------------------------------------------- the hook (bin), Claude Code's wire

/** A hook target: the bin run in this process against `pdpUrl` (its flags make the client). */
export function hookTarget(pdpUrl: () => string, agent: string): Target {
  const hook = async (event: Record<string, unknown>) => {
    const r = await runInProcess(['hook', 'claude-code', '--pdp', pdpUrl(), '--agent', agent, '--timeout', '1500'], {
      input: JSON.stringify({ ...hookBase, ...event }),
    });
    return JSON.parse(r.stdout) as SyncHookJSONOutput;
  };
  return {
    name: 'hook claude-code',
    async action(_pep, args, setup = {}) {
      const ran: Record<string, unknown>[] = [];
      const pre = await hook({ hook_event_name: 'PreToolUse', tool_name: TOOL, tool_input: args, tool_use_id: 't1' });
      const o = pre.hookSpecificOutput as {
        permissionDecision?: string;
        permissionDecisionReason?: string;
        updatedInput?: Record<string, unknown>;
      };
      if (o.permissionDecision !== 'allow') return { ran, seen: o.permissionDecisionReason ?? '' };
      const input = o.updatedInput ?? args;
      ran.push(input);
      const response = (setup.result ?? defaultResult)(input);
      const post = await hook({
        hook_event_name: 'PostToolUse',
        tool_name: TOOL,
        tool_input: input,
        tool_response: response,
        tool_use_id: 't1',
      });
      const replaced = (post.hookSpecificOutput as { updatedToolOutput?: unknown } | undefined)?.updatedToolOutput;
      if (post.decision === 'block') return { ran, seen: `${post.reason ?? ''} | ${asText(replaced)}` };
      return { ran, seen: asText(replaced ?? response) };
    },
    async text(_pep, text) {
      const out = await hook({ hook_event_name: 'UserPromptSubmit', prompt: text });
      return { modelGot: out.decision === 'block' ? undefined : text };
    },
  };
}

/** Every adapter target (the hook is added by the suite, which knows the PDP's URL). */
export const ADAPTER_TARGETS: Target[] = [
  aiTarget(6),
  aiTarget(7),
  langchain,
  openai,
  mcpTarget('server'),
  mcpTarget('client'),
  claudeTarget('canUseTool'),
  claudeTarget('hooks'),
  mastraTarget,
  cloudflareToolsTarget,
  cloudflareMcpTarget,
];
