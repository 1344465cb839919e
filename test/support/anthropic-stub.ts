/**
 * A local stand-in for the Anthropic Messages API, enough of it for the Claude Code binary to run one
 * turn offline: the first `POST /v1/messages` (streamed) asks for one tool call, every later one (after
 * the tool result) ends the turn with text. Everything else answers 404. Set `ANTHROPIC_BASE_URL` to `url`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

/** What the stub saw. */
export interface AnthropicStub {
  url: string;
  /** The tool results the model was sent back, as text. */
  toolResults(): string[];
  /** Messages API calls so far. */
  calls(): number;
  close(): Promise<void>;
}

/**
 * Starts the stub on 127.0.0.1, port 0.
 * @param toolCall - the tool use the model proposes in its first answer
 */
export async function startAnthropicStub(toolCall: {
  name: string;
  input: Record<string, unknown>;
}): Promise<AnthropicStub> {
  const results: string[] = [];
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
      ) as { content: unknown }[];
      for (const r of toolResults) results.push(typeof r.content === 'string' ? r.content : JSON.stringify(r.content));
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
        send('content_block_start', {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'tool_use', id: `toolu_stub_${calls}`, name: toolCall.name, input: {} },
        });
        send('content_block_delta', {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(toolCall.input) },
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
      }
      send('content_block_stop', { type: 'content_block_stop', index: 0 });
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
    calls: () => calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
