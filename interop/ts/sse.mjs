// Interop suite: the legacy HTTP+SSE transport (MCP 2024-11-05) of `everything --http ADDR
// --legacy-sse`, driven by the official TypeScript SDK's SSEClientTransport
// (@modelcontextprotocol/sdk/client/sse.js, pinned in package.json) and by the Inspector's CLI
// (`mcp-inspector --cli URL/sse --transport sse`, pinned in devDependencies). One server for
// the suite. (The Inspector 2.12.0 declares node >= 22.19; its CLI runs on node 20.20 here.)
//
//   node --test --test-reporter=spec sse.mjs        (from interop/ts, after npm install)
//
//   MCP_EVERYTHING_CMD  the everything binary (default: <repo>/target/debug/everything)

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import {
  CreateMessageRequestSchema,
  LATEST_PROTOCOL_VERSION,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { waitFor } from './util.mjs';
import { PROMPTS, RESOURCES, TOOLS, TOOL_LOGS, textOf } from './fixtures.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const SERVER_CMD = process.env.MCP_EVERYTHING_CMD ?? path.resolve(here, '../../target/debug/everything');
const INSPECTOR = path.resolve(here, 'node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');

let server;
let base; // http://127.0.0.1:PORT
let stderr = '';

before(async () => {
  server = spawn(SERVER_CMD, ['--http', '127.0.0.1:0', '--legacy-sse'], { stdio: ['ignore', 'ignore', 'pipe'] });
  base = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no address from everything: ${stderr}`)), 10_000);
    server.stderr.on('data', (chunk) => {
      stderr += chunk.toString();
      const m = /listening on (\S+)\r?\n/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(`http://${m[1]}`);
      }
    });
    server.on('exit', (code) => reject(new Error(`everything exited (${code}): ${stderr}`)));
  });
});

after(() => {
  server?.kill();
  if (process.env.MCP_INTEROP_VERBOSE) console.error(stderr);
});

/** A Client connected over SSEClientTransport, recording what it receives. */
async function connect() {
  const transport = new SSEClientTransport(new URL(`${base}/sse`));
  const received = [];
  const notifications = [];
  const client = new Client({ name: 'mcp-rs-interop-sse', version: '0.1.0' }, { capabilities: { sampling: {} } });
  const errors = [];
  client.onerror = (e) => errors.push(String(e?.message ?? e));
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
    role: 'assistant',
    content: { type: 'text', text: 'This is a test response from the client' },
    model: 'test-model',
    stopReason: 'endTurn',
    _echo: request.params.maxTokens,
  }));
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => notifications.push(n.params));
  await client.connect(transport);
  const onmessage = transport.onmessage;
  transport.onmessage = (message, extra) => {
    received.push(message);
    onmessage?.(message, extra);
  };
  return { client, transport, received, notifications, errors };
}

describe('SSEClientTransport (SDK 1.x) against everything --legacy-sse', () => {
  let c;
  before(async () => {
    c = await connect();
  });
  after(async () => {
    await c?.client.close();
  });

  test('initialize: the server, and the latest revision the SDK asks for', () => {
    assert.equal(c.client.getServerVersion()?.name, 'mcp-rs-everything');
    assert.equal(c.transport._protocolVersion, LATEST_PROTOCOL_VERSION);
    assert.ok(c.client.getServerCapabilities()?.tools);
    assert.match(c.transport._endpoint.href, new RegExp(`^${base}/messages\\?sessionId=[0-9a-f]{32}$`));
  });

  test('tools/list and tools/call', async () => {
    const { tools } = await c.client.listTools();
    const names = tools.map((t) => t.name);
    for (const name of TOOLS) assert.ok(names.includes(name), `${name} listed`);
    assert.equal(textOf(await c.client.callTool({ name: 'test_simple_text', arguments: {} })), 'This is a simple text response for testing.');
  });

  test('progress notifications arrive on the stream before the result', async (t) => {
    const updates = [];
    const r = await c.client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
      onprogress: (p) => updates.push([p.progress, p.total]),
    });
    assert.notEqual(r.isError, true);
    // On the wire: all three, then the result.
    const at = c.received.findLastIndex((m) => m.id !== undefined && m.result?.content);
    const wire = c.received.slice(0, at).filter((m) => m.method === 'notifications/progress').slice(-3);
    assert.deepEqual(wire.map((m) => [m.params.progress, m.params.total]), [[0, 100], [50, 100], [100, 100]]);
    // SDK 1.x handles a notification a tick after the response that follows it, so the last
    // one can reach a handler already removed (typescript-sdk#2580, as over stdio): only
    // such trailing losses are tolerated.
    assert.ok(updates.length >= 1, 'onprogress was called');
    assert.deepEqual(updates, [[0, 100], [50, 100], [100, 100]].slice(0, updates.length));
    if (updates.length < 3) {
      t.diagnostic(`onprogress saw ${updates.length}/3 (typescript-sdk#2580)`);
      const lost = c.errors.splice(0);
      for (const e of lost) assert.match(e, /progress notification for an unknown token/);
    }
  });

  test('logging notifications, after logging/setLevel', async () => {
    await c.client.setLoggingLevel('debug');
    const r = await c.client.callTool({ name: 'test_tool_with_logging', arguments: {} });
    assert.equal(textOf(r), 'Tool with logging executed successfully');
    assert.ok(await waitFor(() => TOOL_LOGS.every((d) => c.notifications.some((n) => n.data === d))), JSON.stringify(c.notifications));
  });

  test('a request to the client (sampling) on the stream, answered by POST', async () => {
    const r = await c.client.callTool({ name: 'test_sampling', arguments: { prompt: 'Test prompt for sampling' } });
    assert.equal(textOf(r), 'LLM response: This is a test response from the client');
  });

  test('resources and prompts', async () => {
    const { resources } = await c.client.listResources();
    for (const [uri] of RESOURCES) assert.ok(resources.some((r) => r.uri === uri), `${uri} listed`);
    const read = await c.client.readResource({ uri: 'test://static-text' });
    assert.equal(read.contents[0].uri, 'test://static-text');
    const { prompts } = await c.client.listPrompts();
    for (const name of PROMPTS) assert.ok(prompts.some((p) => p.name === name), `${name} listed`);
    const got = await c.client.getPrompt({ name: 'test_simple_prompt' });
    assert.ok(got.messages.length > 0);
  });

  test('no SDK errors', () => {
    assert.deepEqual(c.errors, []);
  });
});

test('closing the stream ends the session: its messages URL then gets 404', async () => {
  const c = await connect();
  const endpoint = c.transport._endpoint.href;
  await c.client.close();
  let status;
  for (let i = 0; i < 50; i++) {
    const r = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    status = r.status;
    if (status === 404) {
      const body = await r.json();
      assert.equal(body.error.code, -32600);
      break;
    }
    await new Promise((res) => setTimeout(res, 20));
  }
  assert.equal(status, 404);
});

/** Runs the Inspector's CLI; resolves with its parsed JSON output. */
function inspector(...args) {
  const catalog = mkdtempSync(path.join(os.tmpdir(), 'mcp-inspector-'));
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [INSPECTOR, '--cli', `${base}/sse`, '--transport', 'sse', ...args],
      { timeout: 60_000, env: { ...process.env, MCP_CATALOG_PATH: path.join(catalog, 'mcp.json'), HOME: catalog } },
      (error, stdout, stderrText) => {
        rmSync(catalog, { recursive: true, force: true });
        if (error) return reject(new Error(`inspector ${args.join(' ')}: ${error.message}\n${stdout}\n${stderrText}`));
        try {
          resolve(JSON.parse(stdout));
        } catch (e) {
          reject(new Error(`inspector output is not JSON (${e.message}): ${stdout}\n${stderrText}`));
        }
      },
    );
  });
}

describe('the Inspector CLI (--transport sse)', () => {
  test('tools/list', async () => {
    const out = await inspector('--method', 'tools/list');
    const names = out.tools.map((t) => t.name);
    for (const name of TOOLS) assert.ok(names.includes(name), `${name} listed`);
  });

  test('tools/call', async () => {
    const out = await inspector('--method', 'tools/call', '--tool-name', 'test_simple_text');
    assert.deepEqual(out.content, [{ type: 'text', text: 'This is a simple text response for testing.' }]);
  });
});
