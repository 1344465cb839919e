/**
 * `agent-pep pin mcp --server CMD [ARG...]`: starts an MCP server over stdio, reads its whole tool
 * list and prints the pin set `guardMcpClient(pep, transport, { pin })` loads (docs/visibility.md and
 * docs/cli.md), so that a team can commit it and review its diff. Exit codes: 0 printed, 1 the
 * server could not be started or listed, 2 usage error.
 * @internal
 */
import type { CliIo } from './io.js';
import { EXIT, exitWith, usageExit } from './usage.js';

export const USAGE = `Usage: agent-pep pin mcp --server CMD [ARG...]

Starts the MCP server CMD (with its arguments: everything after --server) over stdio, reads its
whole tool list, and prints the pin set on stdout: { "version": 1, "server": { "name", "version" },
"tools": { "<name>": "<sha256>" } }, each tool's base64url SHA-256 over the RFC 8785 canonical
{ name, title?, description, inputSchema, outputSchema?, annotations? }. Load it with
guardMcpClient(pep, transport, { pin: JSON.parse(readFileSync('tools.pin.json', 'utf8')) }).

  agent-pep pin mcp --server node build/server.js > tools.pin.json

Options:
  --server CMD...   the server's command and its arguments (required; the rest of the line)
  -h, --help        show this help

Exit codes: 0 printed, 1 the server could not be started or listed, 2 usage error.
`;

const COMMAND = 'pin mcp';
/** Most pages read from one server (a server that pages forever is refused). */
const MAX_PAGES = 100;

/** Runs `pin <subcommand>` (only `mcp` exists); resolves with the exit code. */
export async function run(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === '--help' || sub === '-h' || rest[0] === '--help' || rest[0] === '-h') {
    io.stdout.write(USAGE);
    return EXIT.ok;
  }
  if (sub !== 'mcp') {
    usageExit(
      COMMAND,
      sub === undefined ? 'a subcommand is required: mcp' : `unknown subcommand ${JSON.stringify(sub.slice(0, 40))}`,
    );
  }
  if (rest[0] !== '--server') usageExit(COMMAND, '--server CMD is required');
  const [command, ...args] = rest.slice(1);
  if (command === undefined || command === '') usageExit(COMMAND, '--server needs a command');
  const pins = await pinServer(command, args);
  io.stdout.write(`${JSON.stringify(pins, null, 2)}\n`);
  return EXIT.ok;
}

/** Lists every tool of the server `command args` and pins them. @throws CliExit 1 on failure */
async function pinServer(command: string, args: string[]): Promise<unknown> {
  let sdk: {
    Client: typeof import('@modelcontextprotocol/sdk/client/index.js').Client;
    StdioClientTransport: typeof import('@modelcontextprotocol/sdk/client/stdio.js').StdioClientTransport;
  };
  try {
    const [client, stdio] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/stdio.js'),
    ]);
    sdk = { Client: client.Client, StdioClientTransport: stdio.StdioClientTransport };
  } catch {
    exitWith('pin mcp needs @modelcontextprotocol/sdk: npm i @modelcontextprotocol/sdk', EXIT.failure);
  }
  const { PinBook } = await import('../adapters/mcp/pins.js');
  const client = new sdk.Client({ name: 'agent-pep-pin', version: '1' });
  try {
    await client.connect(new sdk.StdioClientTransport({ command, args, stderr: 'inherit' }));
    const book = new PinBook(undefined, false);
    book.checkServer(COMMAND, client.getServerVersion());
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await client.listTools(cursor === undefined ? undefined : { cursor });
      book.check(result.tools as unknown as Record<string, unknown>[], page > 0);
      cursor = result.nextCursor;
      if (cursor === undefined) return book.toJSON();
    }
    return exitWith(`the server listed more than ${MAX_PAGES} pages of tools`, EXIT.failure);
  } catch (error) {
    if (error instanceof Error && error.name === 'CliExit') throw error;
    return exitWith('the server could not be started or its tools listed', EXIT.failure);
  } finally {
    await client.close().catch(() => undefined);
  }
}
