/**
 * `agent-pep pin mcp --server CMD...` (docs/cli.md): prints the pin set of a real MCP server process,
 * which `guardMcpClient(pep, transport, { pin })` loads; usage errors exit 2.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readPinSet } from '../../../src/adapters/mcp/pins.js';
import { runInProcess } from '../../support/cli.js';

const script = fileURLToPath(new URL('../../fixtures/mcp/changing-server.mjs', import.meta.url));

describe('agent-pep pin mcp', () => {
  it('prints the pin set of the server: version 1, its name and version, one sha256 per tool', async () => {
    const r = await runInProcess(['pin', 'mcp', '--server', process.execPath, script, 'orders-srv']);
    expect(r.code).toBe(0);
    const pins = readPinSet('test', JSON.parse(r.stdout));
    expect(pins.server).toEqual({ name: 'orders-srv', version: '1.0.0' });
    expect(Object.keys(pins.tools)).toEqual(['list_orders', 'lookup_order']);
  });

  it('a usage error exits 2; a server that cannot start exits 1', async () => {
    expect((await runInProcess(['pin', 'mcp'])).code).toBe(2);
    expect((await runInProcess(['pin', 'npm'])).code).toBe(2);
    expect((await runInProcess(['pin', 'mcp', '--server', '/nonexistent/server-binary'])).code).toBe(1);
    expect((await runInProcess(['pin', '--help'])).stdout).toContain('agent-pep pin mcp --server');
  });
});
