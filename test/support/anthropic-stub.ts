/**
 * A local stand-in for the Anthropic Messages API, enough of it for the Claude Code binary to run one
 * turn offline: the first `POST /v1/messages` (streamed) asks for the given tool calls (one or several
 * in one answer, as a model may), every later one (after the tool results) ends the turn with text.
 * Everything else answers 404. Set `ANTHROPIC_BASE_URL` to `url`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

/** What the stub saw. */
export interface AnthropicStub {
  url: string;
  /** The tool results the model was sent back, as text. */
  toolResults(): string[];
  /** The result the model was sent back for the i-th proposed tool call (0-based), as text. */
  toolResult(i: number): string | undefined;
  /** Messages API calls so far. */
  calls(): number;
  close(): Promise<void>;
}

/** A tool use the stub model proposes. */
export interface StubToolCall {
  name: string;
  input: Record<string, unknown>;
}

/**
 * Starts the stub on 127.0.0.1, port 0.
 * @param toolCalls - the tool use (or uses, in order) the model proposes in its first answer
 */
export async function startAnthropicStub(toolCalls: StubToolCall | StubToolCall[]): Promise<AnthropicStub> {
  const proposed = Array.isArray(toolCalls) ? toolCalls : [toolCalls];
  const results: string[] = [];
  const byId = new Map<string, string>();
  let calls = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      const path = req.url ?? '';
      if (req.method !== 'POST' || !path.startsWith('/v1/messages') || path.includes('count_tokens')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"type":"error","error":{"type":"not_found_error","message":"stub"}}');
        return;
      }
      calls++;
      const request = JSON.parse(body) as { model: string; messages: { content: unknown }[]; tools?: unknown[] };
      const toolResults = request.messages.flatMap((m) =>
        Array.isArray(m.content) ? m.content.filter((c: { type?: string }) => c.type === 'tool_result') : [],
      ) as { tool_use_id?: string; content: unknown }[];
      for (const r of toolResults) {
        const text = typeof r.content === 'string' ? r.content : JSON.stringify(r.content);
        results.push(text);
        if (r.tool_use_id !== undefined) byId.set(r.tool_use_id, text);
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const send = (event: string, data: object) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      send('message_start', {
        type: 'message_start',
        message: {
          id: `msg_stub_${calls}`,
          type: 'message',
          role: 'assistant',
          model: request.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 1, output_tokens: 1 },
        },
      });
      const askForTool = toolResults.length === 0 && (request.tools?.length ?? 0) > 0;
      if (askForTool) {
        proposed.forEach((call, index) => {
          send('content_block_start', {
            type: 'content_block_start',
            index,
            content_block: { type: 'tool_use', id: `toolu_stub_${index}`, name: call.name, input: {} },
          });
          send('content_block_delta', {
            type: 'content_block_delta',
            index,
            delta: { type: 'input_json_delta', partial_json: JSON.stringify(call.input) },
          });
          send('content_block_stop', { type: 'content_block_stop', index });
        });
      } else {
        send('content_block_start', {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'text', text: '' },
        });
        send('content_block_delta', {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'text_delta', text: 'done' },
        });
        send('content_block_stop', { type: 'content_block_stop', index: 0 });
      }
      send('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: askForTool ? 'tool_use' : 'end_turn', stop_sequence: null },
        usage: { output_tokens: 1 },
      });
      send('message_stop', { type: 'message_stop' });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    toolResults: () => [...results],
    toolResult: (i) => byId.get(`toolu_stub_${i}`),
    calls: () => calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The environment the Claude Code binary runs in against `stub`, offline: the stub as the Messages API,
 * a dummy key, `home` as HOME, and no traffic beyond the stub (telemetry, updates).
 */
export function offlineClaudeEnv(stub: AnthropicStub, home: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: home,
    ANTHROPIC_BASE_URL: stub.url,
    ANTHROPIC_API_KEY: 'sk-ant-test-dummy',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
  };
}
