// Reference MCP server on the official TypeScript SDK 1.x (@modelcontextprotocol/sdk, pinned in
// package.json): the handshake era (`initialize`, protocol revisions up to 2025-11-25). It serves
// the fixed surface of interop/REFERENCE.md, the same one interop/py/reference_server.py and
// reference-modern.mjs serve, so one test can drive the mcp-rs client against all of them.
// Nothing here is mcp-rs code: it is the SDK's McpServer used the way its own examples use it.
//
//   node reference-legacy.mjs stdio   serve one client on stdin/stdout
//   node reference-legacy.mjs http    Streamable HTTP on 127.0.0.1, a free port; prints exactly one
//                                     line `listening on http://127.0.0.1:PORT/mcp` to stdout
//
// Over HTTP the transport is stateful (Mcp-Session-Id): each session gets its own McpServer (an
// SDK Server serves one transport), so `add_tool` adds `extra` to the calling session only.
// Diagnostics go to stderr.

import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  isInitializeRequest,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';

const ITEM_TEMPLATE = 'ref://items/{id}';
const NAMES = ['alice', 'albert', 'bob'];
const ITEM_IDS = ['1', '2', '3'];
const text = (t) => ({ type: 'text', text: t });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const startingWith = (choices, value) => choices.filter((c) => c.startsWith(value ?? ''));

/** One McpServer with the whole reference surface (one per stdio process / HTTP session). */
export function buildServer() {
  const mcp = new McpServer(
    { name: 'ts-reference', version: '1.0.0' },
    {
      // tools.listChanged and prompts/resources are filled in by McpServer as things register;
      // logging makes the Server answer logging/setLevel (and filter by it, per session);
      // resources.subscribe is served by the handlers below.
      capabilities: { logging: {}, resources: { subscribe: true }, tools: { listChanged: true } },
    },
  );
  const server = mcp.server;
  const subscribed = new Set(); // resources/subscribe URIs of this session

  // ---- tools ----------------------------------------------------------------------------------

  mcp.registerTool(
    'echo',
    { description: 'Echo the text back', inputSchema: { text: z.string() } },
    async ({ text: t }) => ({ content: [text(`echo: ${t}`)] }),
  );

  mcp.registerTool(
    'add',
    {
      description: 'Add two numbers',
      inputSchema: { a: z.number(), b: z.number() },
      outputSchema: { sum: z.number() },
    },
    async ({ a, b }) => {
      const total = { sum: a + b };
      return { content: [text(JSON.stringify(total))], structuredContent: total };
    },
  );

  mcp.registerTool(
    'slow',
    { description: 'Report progress once per step', inputSchema: { steps: z.number().int() } },
    async ({ steps }, extra) => {
      const progressToken = extra._meta?.progressToken;
      for (let step = 1; step <= steps; step++) {
        if (progressToken !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress: step, total: steps },
          });
        }
        await sleep(10);
      }
      return { content: [text(`done ${steps}`)] };
    },
  );

  mcp.registerTool(
    'log',
    { description: 'Send a log message (level info)', inputSchema: { message: z.string() } },
    async ({ message }, extra) => {
      // server.sendLoggingMessage(params, sessionId) would honour logging/setLevel too, but sends on
      // the session's standalone stream (over HTTP the GET SSE stream); extra.sendNotification puts
      // the message on this call's own stream. The level filter is the Server's own (the one
      // sendLoggingMessage applies), keyed like it by the transport's session id.
      if (!server.isMessageIgnored('info', extra.sessionId)) {
        await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: message } });
      }
      return { content: [text('logged')] };
    },
  );

  mcp.registerTool(
    'ask_llm',
    { description: "Ask the client's LLM (sampling/createMessage)", inputSchema: { prompt: z.string() } },
    async ({ prompt }, extra) => {
      const result = await server.createMessage(
        { messages: [{ role: 'user', content: text(prompt) }], maxTokens: 50 },
        { relatedRequestId: extra.requestId },
      );
      const content = Array.isArray(result.content) ? result.content[0] : result.content;
      return { content: [text(`sampled: ${content?.type === 'text' ? content.text : JSON.stringify(content)}`)] };
    },
  );

  mcp.registerTool(
    'ask_user',
    { description: 'Ask the user (elicitation/create, form mode)', inputSchema: { question: z.string() } },
    async ({ question }, extra) => {
      const result = await server.elicitInput(
        {
          mode: 'form',
          message: question,
          requestedSchema: {
            type: 'object',
            properties: { name: { type: 'string' }, age: { type: 'integer', default: 42 } },
            required: ['name'],
          },
        },
        { relatedRequestId: extra.requestId },
      );
      return { content: [text(`${result.action} ${JSON.stringify(result.content ?? null)}`)] };
    },
  );

  mcp.registerTool('roots', { description: "List the client's roots (roots/list)" }, async (extra) => {
    const { roots } = await server.listRoots(undefined, { relatedRequestId: extra.requestId });
    return { content: [text(`roots: ${roots.map((r) => r.uri).join(',')}`)] };
  });

  mcp.registerTool('fail', { description: 'Always fails (isError result)' }, async () => ({
    content: [text('failed on purpose')],
    isError: true,
  }));

  mcp.registerTool('add_tool', { description: 'Add the tool `extra` and announce the tools list change' }, async () => {
    // Registering on a connected McpServer sends notifications/tools/list_changed by itself (on the
    // session's standalone stream: over HTTP the GET SSE stream). Registering twice would throw.
    if (!mcp._registeredTools.extra) {
      mcp.registerTool('extra', { description: 'Added by add_tool' }, async () => ({ content: [text('extra')] }));
    } else {
      mcp.sendToolListChanged();
    }
    return { content: [text('added')] };
  });

  mcp.registerTool(
    'touch',
    { description: 'Announce an update of the resource `uri` to its subscribers', inputSchema: { uri: z.string() } },
    async ({ uri }) => {
      if (subscribed.has(uri)) await server.sendResourceUpdated({ uri });
      return { content: [text('touched')] };
    },
  );

  // ---- resources ------------------------------------------------------------------------------

  mcp.registerResource('static_text', 'ref://static/text', { mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'static text' }],
  }));
  mcp.registerResource('static_blob', 'ref://static/blob', { mimeType: 'application/octet-stream' }, async (uri) => ({
    contents: [
      { uri: uri.href, mimeType: 'application/octet-stream', blob: Buffer.from([0, 1, 2, 3]).toString('base64') },
    ],
  }));
  mcp.registerResource(
    'item',
    new ResourceTemplate(ITEM_TEMPLATE, { list: undefined, complete: { id: (value) => startingWith(ITEM_IDS, value) } }),
    { mimeType: 'text/plain' },
    async (uri, { id }) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: `item ${id}` }] }),
  );
  server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    subscribed.add(request.params.uri);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    subscribed.delete(request.params.uri);
    return {};
  });

  // ---- prompts (completion of greet's `name` rides on completable) -------------------------------

  mcp.registerPrompt(
    'greet',
    {
      description: 'Greet someone',
      argsSchema: { name: completable(z.string(), (value) => startingWith(NAMES, value)) },
    },
    async ({ name }) => ({ messages: [{ role: 'user', content: text(`Hello, ${name}!`) }] }),
  );
  mcp.registerPrompt('plain', { description: 'A prompt without arguments' }, async () => ({
    messages: [{ role: 'user', content: text('plain prompt') }],
  }));

  return mcp;
}

async function serveHttp() {
  const transports = new Map(); // Mcp-Session-Id -> transport

  const http = createServer(async (req, res) => {
    try {
      const url = new URL(req.url, 'http://127.0.0.1');
      if (url.pathname !== '/mcp') {
        res.writeHead(404).end();
        return;
      }
      let body;
      if (req.method === 'POST') {
        const chunks = [];
        for await (const chunk of req) chunks.push(chunk);
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null }));
          return;
        }
      }
      const sessionId = req.headers['mcp-session-id'];
      let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
      if (!transport) {
        if (sessionId !== undefined || req.method !== 'POST' || !isInitializeRequest(body)) {
          res.writeHead(sessionId !== undefined ? 404 : 400, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              jsonrpc: '2.0',
              error: { code: -32000, message: sessionId !== undefined ? 'Session not found' : 'No valid session ID' },
              id: null,
            }),
          );
          return;
        }
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => transports.set(id, transport),
        });
        transport.onclose = () => {
          if (transport.sessionId) transports.delete(transport.sessionId);
        };
        await buildServer().connect(transport);
      }
      await transport.handleRequest(req, res, body);
    } catch (err) {
      process.stderr.write(`request failed: ${err?.stack ?? err}\n`);
      if (!res.headersSent) res.writeHead(500).end();
    }
  });
  http.listen(0, '127.0.0.1', () => {
    process.stdout.write(`listening on http://127.0.0.1:${http.address().port}/mcp\n`);
  });
  const stop = () => {
    for (const t of transports.values()) t.close().catch(() => {});
    http.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

const mode = process.argv[2];
if (mode === 'stdio') {
  await buildServer().connect(new StdioServerTransport());
} else if (mode === 'http') {
  await serveHttp();
} else {
  process.stderr.write('usage: node reference-legacy.mjs stdio|http\n');
  process.exit(2);
}
