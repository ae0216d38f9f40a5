// Reference MCP server on the official TypeScript SDK 2.x (@modelcontextprotocol/server, pinned in
// package.json): protocol revision 2026-07-28 (stateless: `server/discover`, the per-request
// `_meta` envelope, `input_required` results, `subscriptions/listen`). It serves the fixed surface
// of interop/REFERENCE.md, the same one interop/py/reference_server.py and reference-legacy.mjs
// serve, so one test can drive the mcp-rs client against all of them. Nothing here is mcp-rs
// code: it is the SDK used the way its own documentation shows (one McpServer factory handed to
// the SDK's serving entries).
//
//   node reference-modern.mjs stdio   serveStdio(factory): the opening message picks the era, so
//                                     2025-era clients (initialize) are served too
//   node reference-modern.mjs http    createMcpHandler(factory) on 127.0.0.1, a free port; prints
//                                     exactly one line `listening on http://127.0.0.1:PORT/mcp`.
//                                     2026-07-28 requests get a fresh instance each; 2025-era
//                                     requests get the SDK's default stateless legacy fallback
//
// Client input (ask_llm, ask_user, roots) is written once, the 2.x way: the handler returns
// `inputRequired({ inputRequests })` and reads the answers from `ctx.mcpReq.inputResponses` when
// the client retries. On a 2025-era connection the SDK's legacy shim turns the same return into
// real server-to-client requests and re-enters the handler.
// Diagnostics go to stderr.

import { createServer } from 'node:http';

import {
  completable,
  createMcpHandler,
  fromJsonSchema,
  inputRequired,
  inputResponse,
  McpServer,
  ResourceTemplate,
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod/v4';

const ITEM_TEMPLATE = 'ref://items/{id}';
const NAMES = ['alice', 'albert', 'bob'];
const ITEM_IDS = ['1', '2', '3'];
const PERSON_SCHEMA = {
  type: 'object',
  properties: { name: { type: 'string' }, age: { type: 'integer', default: 42 } },
  required: ['name'],
};
const text = (t) => ({ type: 'text', text: t });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const startingWith = (choices, value) => choices.filter((c) => c.startsWith(value ?? ''));
const log = (line) => process.stderr.write(`reference-modern: ${line}\n`);

// State shared by every instance the factory builds (over HTTP: one instance per request).
const shared = {
  extraAdded: false,
  /** Publishes a change event to subscriptions/listen streams; set per transport below. */
  notify: { toolsChanged: () => {}, resourceUpdated: () => {} },
};

/** The McpServer factory handed to serveStdio / createMcpHandler. `era` is 'modern' or 'legacy'. */
function buildServer({ era }) {
  const mcp = new McpServer(
    { name: 'ts-reference', version: '1.0.0' },
    {
      capabilities: {
        logging: {},
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
      },
    },
  );
  const server = mcp.server;
  const subscribed = new Set(); // 2025-era resources/subscribe URIs of this connection

  let hasExtra = false;
  const registerExtra = () => {
    hasExtra = true;
    mcp.registerTool('extra', { description: 'Added by add_tool' }, async () => ({ content: [text('extra')] }));
  };
  if (shared.extraAdded) registerExtra();

  // ---- tools ----------------------------------------------------------------------------------

  mcp.registerTool(
    'echo',
    { description: 'Echo the text back', inputSchema: z.object({ text: z.string() }) },
    async ({ text: t }) => ({ content: [text(`echo: ${t}`)] }),
  );

  mcp.registerTool(
    'add',
    {
      description: 'Add two numbers',
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      // fromJsonSchema publishes this schema as written (zod would add $schema/additionalProperties).
      outputSchema: fromJsonSchema({
        type: 'object',
        properties: { sum: { type: 'number' } },
        required: ['sum'],
      }),
    },
    async ({ a, b }) => {
      const total = { sum: a + b };
      return { content: [text(JSON.stringify(total))], structuredContent: total };
    },
  );

  mcp.registerTool(
    'slow',
    { description: 'Report progress once per step', inputSchema: z.object({ steps: z.number().int() }) },
    async ({ steps }, ctx) => {
      const progressToken = ctx.mcpReq._meta?.progressToken;
      for (let step = 1; step <= steps; step++) {
        if (progressToken !== undefined) {
          await ctx.mcpReq.notify({
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
    { description: 'Send a log message (level info)', inputSchema: z.object({ message: z.string() }) },
    async ({ message }, ctx) => {
      // The SDK applies the filter: logging/setLevel on a 2025-era connection, the request's
      // _meta log level (io.modelcontextprotocol/logLevel) on 2026-07-28.
      await ctx.mcpReq.log('info', message);
      return { content: [text('logged')] };
    },
  );

  mcp.registerTool(
    'ask_llm',
    { description: "Ask the client's LLM (sampling/createMessage)", inputSchema: z.object({ prompt: z.string() }) },
    async ({ prompt }, ctx) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, 'sample');
      if (answer.kind !== 'sampling') {
        return inputRequired({
          inputRequests: {
            sample: inputRequired.createMessage({
              messages: [{ role: 'user', content: text(prompt) }],
              maxTokens: 50,
            }),
          },
        });
      }
      const content = Array.isArray(answer.result.content) ? answer.result.content[0] : answer.result.content;
      return { content: [text(`sampled: ${content?.type === 'text' ? content.text : JSON.stringify(content)}`)] };
    },
  );

  mcp.registerTool(
    'ask_user',
    { description: 'Ask the user (elicitation/create, form mode)', inputSchema: z.object({ question: z.string() }) },
    async ({ question }, ctx) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, 'person');
      if (answer.kind !== 'elicit') {
        return inputRequired({
          inputRequests: {
            person: inputRequired.elicit({ mode: 'form', message: question, requestedSchema: PERSON_SCHEMA }),
          },
        });
      }
      return { content: [text(`${answer.action} ${JSON.stringify(answer.content ?? null)}`)] };
    },
  );

  mcp.registerTool('roots', { description: "List the client's roots (roots/list)" }, async (ctx) => {
    const answer = inputResponse(ctx.mcpReq.inputResponses, 'roots');
    if (answer.kind !== 'roots') {
      return inputRequired({ inputRequests: { roots: inputRequired.listRoots() } });
    }
    return { content: [text(`roots: ${answer.roots.map((r) => r.uri).join(',')}`)] };
  });

  mcp.registerTool('fail', { description: 'Always fails (isError result)' }, async () => ({
    content: [text('failed on purpose')],
    isError: true,
  }));

  mcp.registerTool('add_tool', { description: 'Add the tool `extra` and announce the tools list change' }, async () => {
    shared.extraAdded = true;
    // Registering on a connected instance makes it send notifications/tools/list_changed: on a
    // 2025-era stdio connection straight to the client, on a 2026-07-28 stdio connection through
    // serveStdio's listen router to the subscriptions/listen streams that asked for it.
    if (!hasExtra) registerExtra();
    else mcp.sendToolListChanged();
    // Over HTTP the instance lives for this one request: the handler's bus reaches the listeners.
    shared.notify.toolsChanged();
    return { content: [text('added')] };
  });

  mcp.registerTool(
    'touch',
    {
      description: 'Announce an update of the resource `uri` to its subscribers',
      inputSchema: z.object({ uri: z.string() }),
    },
    async ({ uri }) => {
      if (era === 'modern') {
        // stdio: the listen router delivers it to streams subscribed to uri; HTTP: the bus does.
        await server.sendResourceUpdated({ uri }).catch((e) => log(`sendResourceUpdated: ${e}`));
        shared.notify.resourceUpdated(uri);
      } else if (subscribed.has(uri)) {
        await server.sendResourceUpdated({ uri });
      }
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
  if (era === 'legacy') {
    // resources/subscribe exists up to 2025-11-25 only (2026-07-28: subscriptions/listen).
    server.setRequestHandler('resources/subscribe', async (request) => {
      subscribed.add(request.params.uri);
      return {};
    });
    server.setRequestHandler('resources/unsubscribe', async (request) => {
      subscribed.delete(request.params.uri);
      return {};
    });
  }

  // ---- prompts (completion of greet's `name` rides on completable) -------------------------------

  mcp.registerPrompt(
    'greet',
    {
      description: 'Greet someone',
      argsSchema: z.object({ name: completable(z.string(), (value) => startingWith(NAMES, value)) }),
    },
    async ({ name }) => ({ messages: [{ role: 'user', content: text(`Hello, ${name}!`) }] }),
  );
  mcp.registerPrompt('plain', { description: 'A prompt without arguments' }, async () => ({
    messages: [{ role: 'user', content: text('plain prompt') }],
  }));

  return mcp;
}

/** node:http <-> the handler's web-standard fetch face (what @modelcontextprotocol/node wraps). */
async function serveHttp() {
  const handler = createMcpHandler(buildServer, { onerror: (e) => log(`handler: ${e?.message ?? e}`) });
  shared.notify = handler.notify;

  const http = createServer(async (req, res) => {
    const controller = new AbortController();
    res.on('close', () => controller.abort());
    try {
      const url = new URL(req.url, `http://${req.headers.host ?? '127.0.0.1'}`);
      if (url.pathname !== '/mcp') {
        res.writeHead(404).end();
        return;
      }
      let body;
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        const chunks = [];
        for await (const chunk of req) chunks.push(chunk);
        body = Buffer.concat(chunks);
      }
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (Array.isArray(value)) value.forEach((v) => headers.append(name, v));
        else if (value !== undefined) headers.set(name, value);
      }
      const request = new Request(url, { method: req.method, headers, body, signal: controller.signal });
      const response = await handler.fetch(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body) {
        const reader = response.body.getReader();
        res.on('close', () => reader.cancel().catch(() => {}));
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          res.write(value);
        }
      }
      res.end();
    } catch (err) {
      if (!controller.signal.aborted) log(`request failed: ${err?.stack ?? err}`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
  http.listen(0, '127.0.0.1', () => {
    process.stdout.write(`listening on http://127.0.0.1:${http.address().port}/mcp\n`);
  });
  const stop = () => {
    handler.close().finally(() => process.exit(0));
    http.close();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

const mode = process.argv[2];
if (mode === 'stdio') {
  serveStdio(buildServer, { onerror: (e) => log(`stdio: ${e?.message ?? e}`) });
} else if (mode === 'http') {
  await serveHttp();
} else {
  process.stderr.write('usage: node reference-modern.mjs stdio|http\n');
  process.exit(2);
}
