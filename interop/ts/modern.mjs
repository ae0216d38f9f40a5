// Interop suite: the official TypeScript SDK 2.x client (@modelcontextprotocol/client, pinned in
// package.json next to the 1.x @modelcontextprotocol/sdk the other suites use) against the
// mcp-rs `everything` example server over Streamable HTTP, in the stateless 2026-07-28 era:
// `server/discover` instead of `initialize`, no session, every request self-contained (its
// version and client capabilities in params._meta, the 2026 headers Mcp-Method / Mcp-Name /
// Mcp-Param-*), client input through `input_required` results that the SDK itself fulfils and
// retries (its multi-round-trip driver calls the same handlers that answer server requests in the
// handshake era), change notifications through `subscriptions/listen`, and cancellation by
// aborting the call's POST. The fixture contract is in the project notes (everything-contract.md),
// and comments cite its sections as §N. This suite runs over HTTP only (MCP_TRANSPORT is ignored).
//
//   node --test --test-reporter=spec modern.mjs        (from interop/ts, after npm install)
//
// Which server to launch (`<cmd> --http 127.0.0.1:0 [--page-size N]`, one per describe block):
//   MCP_EVERYTHING_CMD  the everything binary (default: <repo>/target/debug/everything). When the
//                       file is run directly (`node modern.mjs PATH`), argv[2] wins.
//   MCP_INTEROP_VERBOSE print the servers' stderr logs at the end
//
// All traffic goes through the SDK's public API (Client, StreamableHTTPClientTransport,
// setRequestHandler for elicitation/create, sampling/createMessage and roots/list). The HTTP
// exchanges are recorded through the transport's `fetch` option: each POST with its headers,
// JSON-RPC body, HTTP status and every JSON-RPC message of its response (JSON or SSE), because
// the SDK hides what the server must get right (resultType, cache hints, rounds, statuses).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import {
  CLIENT_CAPABILITIES_META_KEY,
  Client,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SERVER_INFO_META_KEY,
  StreamableHTTPClientTransport,
  SUBSCRIPTION_ID_META_KEY,
} from '@modelcontextprotocol/client';
import { sleep, waitFor } from './util.mjs';
import { ELICIT_ANSWERS, SAMPLING_ANSWERS, DEFAULT_SAMPLING_ANSWER, ROOTS, TOOL_LOGS, SEP1034_MESSAGE, SEP1330_MESSAGE, oneField, textOf, TOOLS as FIXTURE_TOOLS, TASK_TOOLS, TASKS_EXTENSION, PROMPTS, RESOURCES as FIXTURE_RESOURCES, SKILLS_EXTENSION, SKILL_RESOURCE, TEMPLATE, JSON_SCHEMA_2020_12, ELICITATION_SCHEMA } from './fixtures.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const SERVER_CMD =
  (process.argv[2] && !process.argv[2].startsWith('-') ? process.argv[2] : undefined) ??
  process.env.MCP_EVERYTHING_CMD ??
  path.resolve(here, '../../target/debug/everything');

const MODERN = '2026-07-28';
const INVALID_PARAMS = -32602;
const METHOD_NOT_FOUND = -32601;
const HEADER_MISMATCH = -32020;
const MISSING_CAPABILITY = -32021;
// docs/http.md: how 2026 protocol errors map to HTTP statuses.
const STATUS_OF_ERROR = { [METHOD_NOT_FOUND]: 404, [INVALID_PARAMS]: 400, [HEADER_MISMATCH]: 400, [MISSING_CAPABILITY]: 400, [-32022]: 400 };
const CACHEABLE = ['server/discover', 'tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'resources/read'];
const LIST_TTL_MS = 300000; // §12

// ---- the fixture contract -------------------------------------------------------------------

const SERVER_NAME = 'mcp-rs-everything';
// §1: what server/discover declares in this era (resources.subscribe: listen streams honour
// resourceSubscriptions for the server's subscribable resources).
const CAPABILITIES = {
  tools: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  completions: {},
  logging: {},
  extensions: { [SKILLS_EXTENSION]: { directoryRead: true }, [TASKS_EXTENSION]: {} },
};
// everything's tools/list: the fixtures, then the tasks extension's.
const TOOLS = [...FIXTURE_TOOLS, ...TASK_TOOLS];
// everything's resources/list: the fixtures, then its skill's SKILL.md.
const RESOURCES = [...FIXTURE_RESOURCES, SKILL_RESOURCE];
const SUPPORTED_VERSIONS = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];

// ---- helpers ---------------------------------------------------------------------------------

function jsonAfter(text, prefix) {
  assert.ok(text.startsWith(prefix), `${JSON.stringify(text)} starts with ${JSON.stringify(prefix)}`);
  return JSON.parse(text.slice(prefix.length));
}

function isPng(base64) {
  const bytes = Buffer.from(base64, 'base64');
  return bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
}

/** Awaits a rejection that is a ProtocolError (a JSON-RPC error from the server) with `code`. */
async function rejectsWith(promise, code) {
  let error;
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof ProtocolError, `a ProtocolError, got ${e?.constructor?.name}: ${e}`);
    assert.equal(e.code, code, e.message);
    error = e;
    return true;
  });
  return error;
}

/** `Mcp-Param-*` header value → the string it carries (SEP-2243: literal, or =?base64?…?=). */
function headerValue(raw) {
  const m = /^=\?base64\?(.*)\?=$/.exec(raw);
  return m ? Buffer.from(m[1], 'base64').toString('utf8') : raw;
}

/** Reads every JSON-RPC message of an HTTP response (JSON or SSE) into `rec.messages`. */
async function readMessages(response, rec) {
  const type = response.headers.get('content-type') ?? '';
  if (!response.body) return;
  if (!type.startsWith('text/event-stream')) {
    rec.text = await response.text();
    if (rec.text && type.startsWith('application/json')) {
      const parsed = JSON.parse(rec.text);
      rec.messages.push(...(Array.isArray(parsed) ? parsed : [parsed]));
    }
    return;
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    for (let m = /\r?\n\r?\n/.exec(buffer); m; m = /\r?\n\r?\n/.exec(buffer)) {
      const event = buffer.slice(0, m.index);
      buffer = buffer.slice(m.index + m[0].length);
      const data = event
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data) rec.messages.push(JSON.parse(data));
    }
  }
}

/**
 * A `fetch` for StreamableHTTPClientTransport that records each HTTP exchange: request method,
 * headers and JSON-RPC body; response status, headers and messages (read from a clone, so the
 * SDK sees the response untouched).
 */
function recordingFetch() {
  const records = [];
  const fetchLike = async (input, init = {}) => {
    let body;
    try {
      body = init.body === undefined ? undefined : JSON.parse(init.body);
    } catch {
      body = init.body;
    }
    const rec = {
      at: Date.now(),
      httpMethod: init.method ?? 'GET',
      headers: Object.fromEntries(new Headers(init.headers).entries()),
      body,
      status: undefined,
      responseHeaders: {},
      messages: [],
      done: false,
      error: undefined,
    };
    records.push(rec);
    let response;
    try {
      response = await fetch(input, init);
    } catch (e) {
      rec.error = e?.name ?? String(e);
      rec.done = true;
      throw e;
    }
    rec.status = response.status;
    rec.responseHeaders = Object.fromEntries(response.headers.entries());
    readMessages(response.clone(), rec)
      .catch((e) => {
        rec.error = e?.name ?? String(e);
      })
      .finally(() => {
        rec.done = true;
      });
    return response;
  };
  return { records, fetchLike };
}

/** One recorded POST as {request, response, notifications, status, ...} (response: the reply to request.id). */
function exchangeOf(rec) {
  const request = rec.body;
  return {
    request,
    response: request?.id === undefined ? undefined : rec.messages.find((m) => !m.method && m.id === request.id),
    notifications: rec.messages.filter((m) => m.method && m.id === undefined),
    serverRequests: rec.messages.filter((m) => m.method && m.id !== undefined),
    status: rec.status,
    contentType: rec.responseHeaders['content-type'],
    headers: rec.headers,
    error: rec.error,
    rec,
  };
}

/** A raw exchange as text, for failure messages (and for server bug reports). */
function describeExchange(x) {
  return JSON.stringify({ request: x.request, headers: x.headers, status: x.status, contentType: x.contentType, messages: x.rec.messages, error: x.error });
}

/** Starts `everything --http 127.0.0.1:0 [args]` and waits for its address. */
async function startServer(args = []) {
  const proc = spawn(SERVER_CMD, ['--http', '127.0.0.1:0', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no address from everything --http: ${stderr}`)), 10_000);
    proc.stderr.on('data', (chunk) => {
      stderr += chunk.toString();
      // Wait for the whole line: a chunk can end inside the address.
      const m = /listening on (\S+)\r?\n/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(`http://${m[1]}/mcp`);
      }
    });
    proc.on('exit', (code) => reject(new Error(`everything --http exited (${code}): ${stderr}`)));
  });
  return {
    url,
    proc,
    exited,
    stderr: () => stderr,
    alive: () => proc.exitCode === null && proc.signalCode === null,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill();
      await exited;
      if (stderr && process.env.MCP_INTEROP_VERBOSE) {
        process.stderr.write(`--- everything ${args.join(' ')} stderr ---\n${stderr}--- end ---\n`);
      }
    },
  };
}

/**
 * A Client connected to `server` at 2026-07-28 (pinned by default: no fallback to initialize),
 * with recorded HTTP traffic and handlers answering the server's input requests.
 */
async function connect(server, { sampling = true, elicitation = true, roots = true, mode = { pin: MODERN }, options = {} } = {}) {
  const { records, fetchLike } = recordingFetch();
  const asked = []; // { kind, key, params } for every input request a handler answered
  const notifications = [];
  const sdkErrors = [];
  let elicitOverride;
  let rootsList = ROOTS;

  const capabilities = {};
  if (sampling) capabilities.sampling = {};
  if (elicitation) capabilities.elicitation = {};
  if (roots) capabilities.roots = { listChanged: true };
  const client = new Client({ name: 'mcp-rs-interop-ts-modern', version: '0.1.0' }, { capabilities, versionNegotiation: { mode }, ...options });
  client.onerror = (e) => sdkErrors.push(String(e?.message ?? e));

  // In this era the handlers are called by the SDK's input_required driver, with the
  // inputRequests key as ctx.mcpReq.id.
  if (sampling) {
    client.setRequestHandler('sampling/createMessage', async (request, ctx) => {
      asked.push({ kind: 'sampling', key: ctx.mcpReq.id, params: request.params });
      const first = request.params.messages[0]?.content;
      const text = SAMPLING_ANSWERS[first?.text] ?? DEFAULT_SAMPLING_ANSWER;
      return { role: 'assistant', content: { type: 'text', text }, model: 'test-model', stopReason: 'endTurn' };
    });
  }
  if (elicitation) {
    client.setRequestHandler('elicitation/create', async (request, ctx) => {
      asked.push({ kind: 'elicitation', key: ctx.mcpReq.id, params: request.params });
      const override = elicitOverride?.(request.params);
      if (override) return override;
      const content = ELICIT_ANSWERS[request.params.message];
      if (!content) throw new ProtocolError(INVALID_PARAMS, `unexpected elicitation: ${request.params.message}`);
      return { action: 'accept', content };
    });
  }
  if (roots) {
    client.setRequestHandler('roots/list', async (request, ctx) => {
      asked.push({ kind: 'roots', key: ctx.mcpReq.id, params: request.params });
      return { roots: rootsList };
    });
  }
  for (const method of ['notifications/message', 'notifications/tools/list_changed', 'notifications/prompts/list_changed', 'notifications/resources/list_changed']) {
    client.setNotificationHandler(method, (n) => notifications.push(n));
  }

  const transport = new StreamableHTTPClientTransport(new URL(server.url), { fetch: fetchLike });
  await client.connect(transport);

  return {
    client,
    records,
    asked,
    notifications,
    sdkErrors,
    setElicit(fn) {
      elicitOverride = fn;
    },
    setRoots(list) {
      rootsList = list;
    },
    of(kind) {
      return asked.filter((a) => a.kind === kind);
    },
    /** Recorded POSTs of `method` (and params.name / params.uri), as exchanges, oldest first. */
    exchanges(method, name) {
      return records
        .filter((r) => r.body?.method === method && (name === undefined || r.body.params?.name === name || r.body.params?.uri === name))
        .map(exchangeOf);
    },
    /** Waits until every finished HTTP response has been read (listen streams excepted). */
    async settled() {
      const ok = await waitFor(() => records.every((r) => r.done || r.body?.method === 'subscriptions/listen'), 5000);
      assert.ok(ok, 'every recorded response was read to its end');
    },
    async close() {
      await client.close();
    },
  };
}

/** The MRTR rounds of one auto-fulfilled call: [request, response] of each POST, in order. */
function rounds(c, method, name, since = 0) {
  return c.exchanges(method, name).slice(since).map((x) => [x.request, x.response]);
}

/**
 * Checks everything about a client's recorded traffic that holds for every 2026 exchange:
 * stateless POSTs with the 2026 headers and _meta envelope, one answer per request, statuses,
 * resultType everywhere, cache hints where required, no server requests on any stream.
 */
function checkWire(c) {
  const problems = [];
  const expect = (ok, what, x) => {
    if (!ok) problems.push(`${what}: ${describeExchange(x)}`);
  };
  for (const rec of c.records) {
    const x = exchangeOf(rec);
    const { request, headers } = x;
    expect(rec.httpMethod === 'POST', 'only POSTs (no GET stream, no DELETE: no session)', x);
    expect(!('mcp-session-id' in headers) && !('mcp-session-id' in rec.responseHeaders), 'no Mcp-Session-Id', x);
    expect(request?.jsonrpc === '2.0', 'a JSON-RPC 2.0 body', x);
    expect(request?.method !== 'initialize', 'no initialize in this era', x);
    expect(headers['mcp-protocol-version'] === MODERN, 'MCP-Protocol-Version: 2026-07-28', x);
    const meta = request?.params?._meta ?? {};
    expect(meta[PROTOCOL_VERSION_META_KEY] === MODERN && typeof meta[CLIENT_CAPABILITIES_META_KEY] === 'object', 'the _meta envelope', x);
    if (request?.id === undefined) {
      // A notification (notifications/cancelled, sent when a listen is closed).
      expect(rec.status === 202 && rec.messages.length === 0, 'a notification is accepted with 202 and no body', x);
      continue;
    }
    expect(headers['mcp-method'] === request.method, 'Mcp-Method names the method', x);
    if (['tools/call', 'prompts/get'].includes(request.method)) expect(headers['mcp-name'] === request.params.name, 'Mcp-Name', x);
    if (request.method === 'resources/read') expect(headers['mcp-name'] === request.params.uri, 'Mcp-Name (uri)', x);
    for (const m of rec.messages) expect(m.jsonrpc === '2.0', 'JSON-RPC 2.0 messages', x);
    expect(x.serverRequests.length === 0, 'no server-to-client requests on any stream (2026 uses input_required)', x);
    if (rec.error === 'AbortError') continue; // a call this suite cancelled by aborting its POST
    expect(rec.error === undefined, `the response was read without error (${rec.error})`, x);
    const answers = rec.messages.filter((m) => !m.method && m.id === request.id);
    // A listen is answered only when the server closes it (graceful shutdown).
    if (request.method === 'subscriptions/listen' && answers.length === 0) continue;
    expect(answers.length === 1, 'exactly one answer per request', x);
    const { response } = x;
    if (!response) continue;
    expect(['application/json', 'text/event-stream'].includes(x.contentType?.split(';')[0]), 'JSON or SSE', x);
    if (response.error) {
      expect(rec.status === (STATUS_OF_ERROR[response.error.code] ?? 200), `HTTP status for ${response.error.code}`, x);
      continue;
    }
    const result = response.result;
    expect(rec.status === 200, 'HTTP 200 for a result', x);
    expect(['complete', 'input_required'].includes(result.resultType), 'resultType on every result', x);
    if (request.method !== 'subscriptions/listen') {
      expect(result._meta?.[SERVER_INFO_META_KEY]?.name === SERVER_NAME, '_meta serverInfo on every result', x);
    }
    if (request.method === 'subscriptions/listen') {
      expect(JSON.stringify(result) === JSON.stringify({ resultType: 'complete', _meta: { [SUBSCRIPTION_ID_META_KEY]: request.id } }), 'a listen\'s closing result', x);
    } else if (result.resultType === 'input_required') {
      expect(!('ttlMs' in result) && !('cacheScope' in result) && !('content' in result) && !('messages' in result), 'input_required carries no cache hints and no content', x);
      expect(result.inputRequests !== undefined || typeof result.requestState === 'string', 'input_required carries inputRequests or requestState', x);
    } else if (CACHEABLE.includes(request.method)) {
      expect(Number.isInteger(result.ttlMs) && result.ttlMs >= 0 && ['public', 'private'].includes(result.cacheScope), 'ttlMs and cacheScope', x);
    }
    // Notifications on a call's stream: only what the request asked for.
    for (const n of x.notifications) {
      if (request.method === 'subscriptions/listen') {
        expect(n.params?._meta?.[SUBSCRIPTION_ID_META_KEY] === request.id, 'listen notifications carry the subscription id', x);
      } else if (n.method === 'notifications/progress') {
        expect(meta.progressToken !== undefined && n.params.progressToken === meta.progressToken, 'progress only for the request\'s progressToken', x);
      } else if (n.method === 'notifications/message') {
        expect(meta[LOG_LEVEL_META_KEY] !== undefined, 'log messages only when the request set a logLevel', x);
      } else {
        expect(false, `unexpected notification ${n.method} on a call's stream`, x);
      }
    }
  }
  assert.deepEqual(problems, []);
}

// ---- the suite -------------------------------------------------------------------------------

const SUITE = `mcp-rs everything over Streamable HTTP at ${MODERN} via @modelcontextprotocol/client (${path.relative(process.cwd(), SERVER_CMD) || SERVER_CMD})`;

describe(SUITE, { timeout: 120_000 }, () => {
  let server;
  let c;

  before(async () => {
    server = await startServer();
    c = await connect(server);
  });

  after(async () => {
    await c?.close();
    await server?.stop();
  });

  // ---- discovery -------------------------------------------------------------------------------

  test('connect: server/discover selects 2026-07-28 (pinned and auto), no initialize, no session', async () => {
    assert.equal(c.client.getProtocolEra(), 'modern');
    assert.equal(c.client.getNegotiatedProtocolVersion(), MODERN);
    assert.equal(c.client.getServerVersion()?.name, SERVER_NAME);
    assert.deepEqual(c.client.getServerCapabilities(), CAPABILITIES);
    await c.settled();
    const [probe] = c.records.map(exchangeOf);
    assert.equal(probe.request.method, 'server/discover', 'the first request is the discover probe');
    assert.equal(probe.status, 200);
    const { _meta, ...discovered } = probe.response.result;
    assert.deepEqual(discovered, { supportedVersions: SUPPORTED_VERSIONS, capabilities: CAPABILITIES, resultType: 'complete', ttlMs: LIST_TTL_MS, cacheScope: 'public' });
    assert.equal(_meta[SERVER_INFO_META_KEY].name, SERVER_NAME);
    assert.deepEqual(probe.request.params._meta[CLIENT_CAPABILITIES_META_KEY], { sampling: {}, elicitation: {}, roots: { listChanged: true } });

    // mode 'auto': the same probe decides; the client never falls back to initialize.
    const auto = await connect(server, { mode: 'auto' });
    try {
      assert.equal(auto.client.getProtocolEra(), 'modern');
      assert.equal(auto.client.getNegotiatedProtocolVersion(), MODERN);
      assert.equal(textOf(await auto.client.callTool({ name: 'test_simple_text' })), 'This is a simple text response for testing.');
      await auto.settled();
      assert.deepEqual(auto.records.map((r) => r.body.method), ['server/discover', 'tools/call']);
      checkWire(auto);
    } finally {
      await auto.close();
    }
  });

  test('tools/list: every fixture, the 2020-12 schema and x-mcp-header unchanged; a second list comes from the cache', async () => {
    const before = c.records.length;
    const listed = await c.client.listTools();
    assert.equal(listed.nextCursor, undefined);
    assert.deepEqual(listed.tools.map((t) => t.name), TOOLS);
    for (const tool of listed.tools) {
      assert.ok(tool.description, `${tool.name}: description`);
      assert.equal(tool.inputSchema.type, 'object', `${tool.name}: inputSchema.type`);
    }
    const byName = Object.fromEntries(listed.tools.map((t) => [t.name, t]));
    assert.deepEqual(byName.json_schema_2020_12_tool.inputSchema, JSON_SCHEMA_2020_12);
    assert.equal(byName.test_custom_header.inputSchema.properties.region['x-mcp-header'], 'Region');
    await c.settled();
    const [page] = c.exchanges('tools/list').slice(-1);
    assert.equal(c.records.length, before + 1, 'one page (the default page size is 50)');
    assert.equal(page.response.result.ttlMs, LIST_TTL_MS);
    assert.equal(page.response.result.cacheScope, 'public');
    // ttlMs 300000: the SDK serves the next list from its cache, without a request.
    assert.deepEqual((await c.client.listTools()).tools.map((t) => t.name), TOOLS);
    assert.equal(c.records.length, before + 1, 'served from the response cache');
    // An invalid cursor is the server's -32602 (HTTP 400).
    await rejectsWith(c.client.listTools({ cursor: 'not-a-cursor-we-were-given' }), INVALID_PARAMS);
  });

  // ---- tools -----------------------------------------------------------------------------------

  test('tools/call: text (without arguments), image, audio, embedded resource, mixed, isError', async () => {
    assert.equal(textOf(await c.client.callTool({ name: 'test_simple_text' })), 'This is a simple text response for testing.');
    await c.settled();
    const [simple] = c.exchanges('tools/call', 'test_simple_text').slice(-1);
    assert.equal(simple.request.params.arguments, undefined, 'the call carried no arguments');
    assert.deepEqual(simple.response.result.content, [{ type: 'text', text: 'This is a simple text response for testing.' }]);
    assert.equal(simple.response.result.resultType, 'complete');

    const image = await c.client.callTool({ name: 'test_image_content', arguments: {} });
    assert.deepEqual(image.content.map((b) => [b.type, b.mimeType]), [['image', 'image/png']]);
    assert.ok(isPng(image.content[0].data), 'a PNG');
    const audio = await c.client.callTool({ name: 'test_audio_content', arguments: {} });
    assert.deepEqual(audio.content.map((b) => [b.type, b.mimeType]), [['audio', 'audio/wav']]);
    const wav = Buffer.from(audio.content[0].data, 'base64');
    assert.equal(wav.subarray(0, 4).toString('latin1'), 'RIFF');
    assert.equal(wav.subarray(8, 12).toString('latin1'), 'WAVE');
    const embedded = await c.client.callTool({ name: 'test_embedded_resource', arguments: {} });
    assert.deepEqual(embedded.content, [
      { type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } },
    ]);
    const mixed = await c.client.callTool({ name: 'test_multiple_content_types', arguments: {} });
    assert.deepEqual(mixed.content.map((b) => b.type), ['text', 'image', 'resource']);
    assert.equal(mixed.content[0].text, 'Multiple content types test:');
    assert.ok(isPng(mixed.content[1].data));
    assert.deepEqual(JSON.parse(mixed.content[2].resource.text), { test: 'data', value: 123 });

    const failed = await c.client.callTool({ name: 'test_error_handling', arguments: {} });
    assert.equal(failed.isError, true);
    assert.deepEqual(failed.content, [{ type: 'text', text: 'This tool intentionally returns an error for testing' }]);
    await c.settled();
    const [err] = c.exchanges('tools/call', 'test_error_handling').slice(-1);
    assert.equal(err.response.result.resultType, 'complete', 'an isError result carries resultType too');

    const args = { name: 'Ada', contactMethod: 'phone', phone: '+44 20 7946 0000' };
    const r = await c.client.callTool({ name: 'json_schema_2020_12_tool', arguments: args });
    assert.deepEqual(jsonAfter(textOf(r), 'JSON Schema 2020-12 tool called with: '), args);
    assert.equal(
      textOf(await c.client.callTool({ name: 'test_reconnection', arguments: {} })),
      'Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.',
    );
  });

  test('unknown tool: -32602 (HTTP 400), a ProtocolError', async () => {
    const e = await rejectsWith(c.client.callTool({ name: 'no_such_tool', arguments: {} }), INVALID_PARAMS);
    assert.match(e.message, /no_such_tool/);
    await c.settled();
    const [x] = c.exchanges('tools/call', 'no_such_tool');
    assert.equal(x.status, 400, describeExchange(x));
    assert.equal(x.response.error.code, INVALID_PARAMS);
  });

  test('test_custom_header: the SDK mirrors region into Mcp-Param-Region; without it the server says -32020 and the SDK recovers', async () => {
    await c.client.listTools(); // the x-mcp-header declaration the SDK mirrors from
    for (const region of ['eu-west-1', 'héllo', '=?base64?SGVsbG8=?=', ' padded ']) {
      const r = await c.client.callTool({ name: 'test_custom_header', arguments: { region } });
      assert.equal(textOf(r), `Region: ${region}`);
      await c.settled();
      const [x] = c.exchanges('tools/call', 'test_custom_header').slice(-1);
      assert.equal(headerValue(x.headers['mcp-param-region']), region, describeExchange(x));
    }
    // A client that has not listed the tools yet sends the call without the header: the server
    // refuses it (400, -32020), and the SDK re-lists the tools and retries with the header.
    const fresh = await connect(server);
    try {
      const r = await fresh.client.callTool({ name: 'test_custom_header', arguments: { region: 'ap-south-2' } });
      assert.equal(textOf(r), 'Region: ap-south-2');
      await fresh.settled();
      const seen = fresh.records.slice(1).map(exchangeOf);
      assert.deepEqual(seen.map((x) => [x.request.method, x.status, x.headers['mcp-param-region']]), [
        ['tools/call', 400, undefined],
        ['tools/list', 200, undefined],
        ['tools/call', 200, 'ap-south-2'],
      ]);
      assert.equal(seen[0].response.error.code, HEADER_MISMATCH);
      checkWire(fresh);
    } finally {
      await fresh.close();
    }
  });

  test('progress: 0, 50, 100 of 100 on the call\'s SSE stream before the result; none without a progressToken', async () => {
    const updates = [];
    const r = await c.client.callTool({ name: 'test_tool_with_progress', arguments: {} }, { onprogress: (p) => updates.push([p.progress, p.total]) });
    assert.equal(textOf(r), 'Progress test completed');
    assert.deepEqual(updates, [[0, 100], [50, 100], [100, 100]]);
    await c.settled();
    const [x] = c.exchanges('tools/call', 'test_tool_with_progress').slice(-1);
    const token = x.request.params._meta.progressToken;
    assert.notEqual(token, undefined, 'the SDK sent a progressToken');
    assert.equal(x.contentType, 'text/event-stream');
    assert.deepEqual(
      x.rec.messages.map((m) => (m.method ? [m.method, m.params.progressToken, m.params.progress, m.params.total] : ['result', m.id])),
      [
        ['notifications/progress', token, 0, 100],
        ['notifications/progress', token, 50, 100],
        ['notifications/progress', token, 100, 100],
        ['result', x.request.id],
      ],
    );

    const plain = await c.client.callTool({ name: 'test_tool_with_progress', arguments: {} });
    assert.equal(textOf(plain), 'Progress test completed');
    await c.settled();
    const [y] = c.exchanges('tools/call', 'test_tool_with_progress').slice(-1);
    assert.equal(y.request.params._meta.progressToken, undefined);
    assert.deepEqual(y.notifications, []);
  });

  test('cancellation: aborting test_tool_with_progress after its first progress aborts the POST; the server keeps serving', async () => {
    for (let i = 0; i < 3; i++) {
      const controller = new AbortController();
      const updates = [];
      const before = c.exchanges('tools/call', 'test_tool_with_progress').length;
      const call = c.client.callTool({ name: 'test_tool_with_progress', arguments: {} }, {
        signal: controller.signal,
        onprogress: (p) => {
          updates.push(p.progress);
          if (updates.length === 1) controller.abort(new Error('cancelled by the test'));
        },
      });
      await assert.rejects(call, (e) => {
        assert.ok(e instanceof SdkError, `an SdkError, got ${e?.constructor?.name}: ${e}`);
        assert.match(e.message, /cancelled by the test/);
        return true;
      });
      assert.deepEqual(updates, [0]);
      await c.settled();
      const [x] = c.exchanges('tools/call', 'test_tool_with_progress').slice(before);
      // Over HTTP in this era the SDK cancels by aborting the call's own POST (its SSE stream),
      // and sends no notifications/cancelled.
      assert.equal(x.status, 200);
      assert.equal(x.contentType, 'text/event-stream');
      assert.equal(x.error, 'AbortError', describeExchange(x));
      assert.equal(x.response, undefined, 'no result was read');
      assert.deepEqual(x.notifications.map((n) => [n.method, n.params.progress]), [['notifications/progress', 0]]);
      assert.deepEqual(c.exchanges('notifications/cancelled').filter((n) => n.request.params.requestId === x.request.id), []);
    }
    // The server is still up, and the next calls (including the same tool) complete.
    assert.ok(server.alive(), 'the server process is still running');
    assert.equal(textOf(await c.client.callTool({ name: 'test_simple_text' })), 'This is a simple text response for testing.');
    const updates = [];
    const r = await c.client.callTool({ name: 'test_tool_with_progress', arguments: {} }, { onprogress: (p) => updates.push(p.progress) });
    assert.equal(textOf(r), 'Progress test completed');
    assert.deepEqual(updates, [0, 50, 100]);
  });

  test('logging: only with a per-request logLevel (_meta), then on the call\'s stream', async () => {
    const logged = async (name, level) => {
      const before = c.notifications.length;
      const r = await c.client.callTool({ name, arguments: {}, ...(level && { _meta: { [LOG_LEVEL_META_KEY]: level } }) });
      await c.settled();
      const [x] = c.exchanges('tools/call', name).slice(-1);
      const wire = x.notifications.filter((n) => n.method === 'notifications/message').map((n) => [n.params.level, n.params.data]);
      const handled = () => c.notifications.slice(before).filter((n) => n.method === 'notifications/message').map((n) => [n.params.level, n.params.data]);
      await waitFor(() => handled().length >= wire.length, 1000);
      assert.deepEqual(handled(), wire, 'the SDK handler saw exactly what was on the wire');
      return [textOf(r), wire];
    };
    assert.deepEqual(await logged('test_tool_with_logging', 'info'), ['Tool with logging executed successfully', TOOL_LOGS.map((d) => ['info', d])]);
    assert.deepEqual(await logged('test_tool_with_logging', 'debug'), ['Tool with logging executed successfully', TOOL_LOGS.map((d) => ['info', d])]);
    assert.deepEqual(await logged('test_tool_with_logging', 'warning'), ['Tool with logging executed successfully', []]);
    assert.deepEqual(await logged('test_tool_with_logging', undefined), ['Tool with logging executed successfully', []]);
    assert.deepEqual(await logged('test_logging_tool', undefined), ['Logging evaluated', []]);
    assert.deepEqual(await logged('test_logging_tool', 'info'), ['Logging evaluated', [['info', 'Diagnostic trace logging activated']]]);
  });

  test('handshake-era methods (ping, logging/setLevel, resources/subscribe) are refused by the SDK itself in this era', async () => {
    const before = c.records.length;
    for (const call of [() => c.client.ping(), () => c.client.setLoggingLevel('info'), () => c.client.subscribeResource({ uri: 'test://watched-resource' })]) {
      await assert.rejects(call(), (e) => e instanceof SdkError && e.code === SdkErrorCode.MethodNotSupportedByProtocolVersion);
    }
    assert.equal(c.records.length, before, 'nothing was sent');
  });

  test('an unknown method: -32601 in an HTTP 404, which the SDK reports as an SdkHttpError (it unwraps JSON-RPC errors from 400s only)', async () => {
    const anyResult = { '~standard': { version: 1, vendor: 'interop', validate: (value) => ({ value }) } };
    const errorsBefore = c.sdkErrors.length;
    await assert.rejects(c.client.request({ method: 'unknown/method', params: {} }, anyResult), (e) => {
      assert.ok(e instanceof SdkError, String(e));
      assert.equal(e.code, SdkErrorCode.ClientHttpNotImplemented);
      assert.equal(e.data.status, 404);
      assert.equal(JSON.parse(e.data.text).error.code, METHOD_NOT_FOUND);
      return true;
    });
    await c.settled();
    const [x] = c.exchanges('unknown/method');
    assert.equal(x.status, 404);
    assert.deepEqual(x.response, { jsonrpc: '2.0', id: x.request.id, error: { code: METHOD_NOT_FOUND, message: 'Method not found: unknown/method' } });
    // The transport reports the failed POST to onerror as well (and only that).
    assert.deepEqual(c.sdkErrors.splice(errorsBefore), [`Error POSTing to endpoint: ${x.rec.text}`]);
  });

  // ---- resources -------------------------------------------------------------------------------

  test('resources/list, resources/templates/list, resources/read; reads honour ttlMs from the cache', async () => {
    const listed = await c.client.listResources();
    assert.deepEqual(listed.resources.map((r) => [r.uri, r.name, r.mimeType]), RESOURCES);
    for (const r of listed.resources) assert.ok(r.description, `${r.uri}: description`);
    const templates = await c.client.listResourceTemplates();
    assert.deepEqual(templates.resourceTemplates.map((t) => [t.uriTemplate, t.name, t.mimeType]), [[TEMPLATE, 'template', 'application/json']]);

    assert.deepEqual((await c.client.readResource({ uri: 'test://static-text' })).contents, [
      { uri: 'test://static-text', mimeType: 'text/plain', text: 'This is the content of the static text resource.' },
    ]);
    const binary = (await c.client.readResource({ uri: 'test://static-binary' })).contents;
    assert.deepEqual(binary.map((b) => [b.uri, b.mimeType]), [['test://static-binary', 'image/png']]);
    assert.ok(isPng(binary[0].blob));
    assert.deepEqual((await c.client.readResource({ uri: 'test://watched-resource' })).contents, [
      { uri: 'test://watched-resource', mimeType: 'text/plain', text: 'Watched resource content' },
    ]);
    for (const id of ['123', 'abc-42']) {
      const uri = `test://template/${id}/data`;
      const [content] = (await c.client.readResource({ uri })).contents;
      assert.deepEqual([content.uri, content.mimeType], [uri, 'application/json']);
      assert.deepEqual(JSON.parse(content.text), { id, templateTest: true, data: `Data for ID: ${id}` });
    }
    await c.settled();
    const reads = c.exchanges('resources/read');
    assert.deepEqual(reads.map((x) => x.request.params.uri), ['test://static-text', 'test://static-binary', 'test://watched-resource', 'test://template/123/data', 'test://template/abc-42/data']);
    for (const x of reads) {
      assert.equal(x.response.result.resultType, 'complete');
      assert.equal(x.response.result.ttlMs, LIST_TTL_MS, describeExchange(x));
    }
    // A fresh read within ttlMs is served by the SDK's cache: no request.
    const before = c.records.length;
    assert.equal((await c.client.readResource({ uri: 'test://static-text' })).contents[0].text, 'This is the content of the static text resource.');
    assert.equal(c.records.length, before);
  });

  test('resources/read of an unknown URI: -32602 with data.uri (HTTP 400)', async () => {
    for (const uri of ['test://nonexistent-resource-for-conformance-testing', 'test://template/123/other']) {
      const e = await rejectsWith(c.client.readResource({ uri }), INVALID_PARAMS);
      assert.deepEqual(e.data, { uri });
      await c.settled();
      const [x] = c.exchanges('resources/read', uri);
      assert.equal(x.status, 400, describeExchange(x));
    }
  });

  // ---- prompts and completion ------------------------------------------------------------------

  test('prompts/list and prompts/get: simple, with arguments, embedded resource, image; errors -32602', async () => {
    const listed = await c.client.listPrompts();
    assert.deepEqual(listed.prompts.map((p) => p.name), PROMPTS);
    const byName = Object.fromEntries(listed.prompts.map((p) => [p.name, p]));
    assert.deepEqual(byName.test_prompt_with_arguments.arguments.map((a) => [a.name, a.required]), [['arg1', true], ['arg2', true]]);
    assert.deepEqual(byName.test_prompt_with_embedded_resource.arguments.map((a) => [a.name, a.required]), [['resourceUri', true]]);

    assert.deepEqual((await c.client.getPrompt({ name: 'test_simple_prompt' })).messages, [
      { role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } },
    ]);
    assert.deepEqual(
      (await c.client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'testValue1', arg2: 'testValue2' } })).messages,
      [{ role: 'user', content: { type: 'text', text: "Prompt with arguments: arg1='testValue1', arg2='testValue2'" } }],
    );
    assert.deepEqual(
      (await c.client.getPrompt({ name: 'test_prompt_with_embedded_resource', arguments: { resourceUri: 'test://example-resource' } })).messages,
      [
        { role: 'user', content: { type: 'resource', resource: { uri: 'test://example-resource', mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
        { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
      ],
    );
    const image = (await c.client.getPrompt({ name: 'test_prompt_with_image' })).messages;
    assert.deepEqual(image.map((m) => [m.role, m.content.type]), [['user', 'image'], ['user', 'text']]);
    assert.ok(isPng(image[0].content.data));

    await rejectsWith(c.client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'x' } }), INVALID_PARAMS);
    await rejectsWith(c.client.getPrompt({ name: 'no_such_prompt' }), INVALID_PARAMS);
  });

  test('completion/complete: prompt arguments and a template variable, by prefix', async () => {
    const values = async (ref, name, value) => {
      const r = await c.client.complete({ ref, argument: { name, value } });
      assert.notEqual(r.completion.hasMore, true);
      if (r.completion.total !== undefined) assert.equal(r.completion.total, r.completion.values.length);
      return r.completion.values;
    };
    const prompt = { type: 'ref/prompt', name: 'test_prompt_with_arguments' };
    assert.deepEqual(await values(prompt, 'arg1', 'pa'), ['paris', 'park', 'party']);
    assert.deepEqual(await values(prompt, 'arg1', 'pari'), ['paris']);
    assert.deepEqual(await values(prompt, 'arg1', 'test'), []);
    assert.deepEqual(await values(prompt, 'arg2', ''), ['red', 'green', 'blue']);
    const template = { type: 'ref/resource', uri: TEMPLATE };
    assert.deepEqual(await values(template, 'id', ''), ['123', '456', '789']);
    assert.deepEqual(await values(template, 'id', '7'), ['789']);
    await rejectsWith(c.client.complete({ ref: { type: 'ref/prompt', name: 'no_such_prompt' }, argument: { name: 'a', value: '' } }), INVALID_PARAMS);
  });

  // ---- input_required, driven by the SDK ------------------------------------------------------

  /** Runs one call through the SDK's driver; returns its result, the handler calls and the rounds. */
  async function mrtr(method, name, params = {}) {
    const asked = c.asked.length;
    const since = c.exchanges(method, name).length;
    const result = method === 'tools/call'
      ? await c.client.callTool({ name, arguments: {}, ...params })
      : await c.client.getPrompt({ name, ...params });
    await c.settled();
    return { result, asked: c.asked.slice(asked), rounds: rounds(c, method, name, since) };
  }

  /** The retry shape every round must have: same name/arguments, fresh id, the answers for exactly the asked keys. */
  function checkRounds(rs, keysPerRound) {
    assert.equal(rs.length, keysPerRound.length + 1, JSON.stringify(rs.map(([, r]) => r)));
    const ids = new Set(rs.map(([q]) => q.id));
    assert.equal(ids.size, rs.length, 'every round is a new request id');
    for (let i = 0; i < rs.length; i++) {
      const [q, r] = rs[i];
      assert.equal(q.params.name, rs[0][0].params.name);
      assert.deepEqual(q.params.arguments, rs[0][0].params.arguments);
      if (i < keysPerRound.length) {
        assert.equal(r.result.resultType, 'input_required', JSON.stringify(r));
        assert.deepEqual(Object.keys(r.result.inputRequests).sort(), [...keysPerRound[i]].sort());
      } else {
        assert.equal(r.result.resultType, 'complete', JSON.stringify(r));
      }
      if (i === 0) {
        assert.equal(q.params.inputResponses, undefined);
        assert.equal(q.params.requestState, undefined);
      } else {
        const prev = rs[i - 1][1].result;
        assert.deepEqual(Object.keys(q.params.inputResponses).sort(), Object.keys(prev.inputRequests).sort());
        assert.equal(q.params.requestState, prev.requestState, 'requestState echoed byte for byte (or absent both times)');
      }
    }
  }

  test('test_input_required_result_elicitation: the SDK answers user_name through the elicitation handler and retries', async () => {
    const { result, asked, rounds: rs } = await mrtr('tools/call', 'test_input_required_result_elicitation');
    assert.equal(textOf(result), 'Hello, Alice!');
    assert.deepEqual(asked.map((a) => [a.kind, a.key]), [['elicitation', 'user_name']]);
    assert.deepEqual({ ...asked[0].params, mode: undefined }, { message: 'What is your name?', requestedSchema: oneField('name', 'string'), mode: undefined });
    checkRounds(rs, [['user_name']]);
    assert.deepEqual(rs[0][1].result.inputRequests.user_name, {
      method: 'elicitation/create',
      params: { message: 'What is your name?', requestedSchema: oneField('name', 'string') },
    });
    assert.deepEqual(rs[1][0].params.inputResponses, { user_name: { action: 'accept', content: { name: 'Alice' } } });
  });

  test('test_input_required_result_sampling and _list_roots: capital_question, client_roots', async () => {
    let { result, asked, rounds: rs } = await mrtr('tools/call', 'test_input_required_result_sampling');
    assert.equal(textOf(result), 'Sampling result: The capital of France is Paris.');
    assert.deepEqual(asked.map((a) => [a.kind, a.key]), [['sampling', 'capital_question']]);
    assert.deepEqual(asked[0].params, { messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }], maxTokens: 100 });
    checkRounds(rs, [['capital_question']]);
    assert.deepEqual(rs[1][0].params.inputResponses.capital_question, {
      role: 'assistant', content: { type: 'text', text: 'The capital of France is Paris.' }, model: 'test-model', stopReason: 'endTurn',
    });

    ({ result, asked, rounds: rs } = await mrtr('tools/call', 'test_input_required_result_list_roots'));
    assert.equal(textOf(result), 'Found 1 root(s): file:///test/root');
    assert.deepEqual(asked.map((a) => [a.kind, a.key]), [['roots', 'client_roots']]);
    checkRounds(rs, [['client_roots']]);
    assert.deepEqual(rs[0][1].result.inputRequests.client_roots.method, 'roots/list');
    assert.deepEqual(rs[1][0].params.inputResponses.client_roots, { roots: ROOTS });

    c.setRoots([{ uri: 'file:///a' }, { uri: 'file:///b/c', name: 'C' }]);
    try {
      assert.equal(textOf((await mrtr('tools/call', 'test_input_required_result_list_roots')).result), 'Found 2 root(s): file:///a, file:///b/c');
      c.setRoots([]);
      assert.equal(textOf((await mrtr('tools/call', 'test_input_required_result_list_roots')).result), 'Found 0 root(s)');
    } finally {
      c.setRoots(ROOTS);
    }
  });

  test('test_input_required_result_request_state and _multiple_inputs: state echoed, three inputs answered at once', async () => {
    let { result, asked, rounds: rs } = await mrtr('tools/call', 'test_input_required_result_request_state');
    assert.equal(textOf(result), 'state-ok: requestState validated');
    assert.deepEqual(asked.map((a) => [a.kind, a.key, a.params.message]), [['elicitation', 'confirm', 'Please confirm']]);
    assert.deepEqual(asked[0].params.requestedSchema, oneField('ok', 'boolean'));
    checkRounds(rs, [['confirm']]);
    assert.equal(typeof rs[0][1].result.requestState, 'string');

    ({ result, asked, rounds: rs } = await mrtr('tools/call', 'test_input_required_result_multiple_inputs'));
    assert.equal(textOf(result), 'Name: Alice; Greeting: Hello there!; Roots: 1');
    assert.deepEqual(asked.map((a) => [a.kind, a.key]).sort(), [['elicitation', 'user_name'], ['roots', 'client_roots'], ['sampling', 'greeting']]);
    checkRounds(rs, [['user_name', 'greeting', 'client_roots']]);
    const requests = rs[0][1].result.inputRequests;
    assert.deepEqual(Object.fromEntries(Object.entries(requests).map(([k, v]) => [k, v.method])), {
      user_name: 'elicitation/create', greeting: 'sampling/createMessage', client_roots: 'roots/list',
    });
    assert.equal(requests.greeting.params.maxTokens, 50);
    assert.equal(typeof rs[0][1].result.requestState, 'string');
  });

  test('test_input_required_result_multi_round: step1, then step2 with a new requestState', async () => {
    const { result, asked, rounds: rs } = await mrtr('tools/call', 'test_input_required_result_multi_round');
    assert.equal(textOf(result), 'Multi-round complete for Alice who likes blue');
    assert.deepEqual(asked.map((a) => [a.key, a.params.message, a.params.requestedSchema]), [
      ['step1', 'Step 1: What is your name?', oneField('name', 'string')],
      ['step2', 'Step 2: What is your favorite color?', oneField('color', 'string')],
    ]);
    checkRounds(rs, [['step1'], ['step2']]);
    const [s1, s2] = [rs[0][1].result.requestState, rs[1][1].result.requestState];
    assert.ok(typeof s1 === 'string' && typeof s2 === 'string' && s1 !== s2, 'each round mints its own state');
  });

  test('test_input_required_result_prompt: prompts/get needs input too (user_context)', async () => {
    const { result, asked, rounds: rs } = await mrtr('prompts/get', 'test_input_required_result_prompt');
    assert.deepEqual(result.messages, [{ role: 'user', content: { type: 'text', text: 'Prompt with context: test context' } }]);
    assert.deepEqual(asked.map((a) => [a.key, a.params.message, a.params.requestedSchema]), [
      ['user_context', 'What context should the prompt use?', oneField('context', 'string')],
    ]);
    checkRounds(rs, [['user_context']]);
  });

  test('test_sampling, test_elicitation (accept and decline), SEP-1034 defaults, SEP-1330 enums, streaming elicitation, capabilities', async () => {
    let { result, asked, rounds: rs } = await mrtr('tools/call', 'test_sampling', { arguments: { prompt: 'Test prompt for sampling' } });
    assert.equal(textOf(result), 'LLM response: This is a test response from the client');
    assert.deepEqual(asked.map((a) => [a.kind, a.key, a.params]), [
      ['sampling', 'sampling', { messages: [{ role: 'user', content: { type: 'text', text: 'Test prompt for sampling' } }], maxTokens: 100 }],
    ]);
    checkRounds(rs, [['sampling']]);

    ({ result, asked, rounds: rs } = await mrtr('tools/call', 'test_elicitation', { arguments: { message: 'Please provide your information' } }));
    assert.deepEqual(jsonAfter(textOf(result), 'User response: action=accept, content='), { username: 'testuser', email: 'test@example.com' });
    assert.deepEqual(asked.map((a) => [a.key, a.params.message, a.params.requestedSchema]), [['elicitation', 'Please provide your information', ELICITATION_SCHEMA]]);
    checkRounds(rs, [['elicitation']]);
    for (const action of ['decline', 'cancel']) {
      c.setElicit(() => ({ action }));
      try {
        ({ result } = await mrtr('tools/call', 'test_elicitation', { arguments: { message: 'Please provide your information' } }));
        assert.equal(textOf(result), `User response: action=${action}, content={}`);
      } finally {
        c.setElicit(undefined);
      }
    }

    ({ result, asked } = await mrtr('tools/call', 'test_elicitation_sep1034_defaults'));
    assert.deepEqual(jsonAfter(textOf(result), 'Elicitation completed: action=accept, content='), ELICIT_ANSWERS[SEP1034_MESSAGE]);
    const props = asked[0].params.requestedSchema.properties;
    assert.deepEqual(
      Object.fromEntries(Object.entries(props).map(([k, v]) => [k, [v.type, v.default]])),
      { name: ['string', 'John Doe'], age: ['integer', 30], score: ['number', 95.5], status: ['string', 'active'], verified: ['boolean', true] },
    );
    ({ result, asked } = await mrtr('tools/call', 'test_elicitation_sep1330_enums'));
    assert.deepEqual(jsonAfter(textOf(result), 'Elicitation completed: action=accept, content='), ELICIT_ANSWERS[SEP1330_MESSAGE]);
    assert.deepEqual(Object.keys(asked[0].params.requestedSchema.properties), ['untitledSingle', 'titledSingle', 'legacyEnum', 'untitledMulti', 'titledMulti']);

    ({ result, asked, rounds: rs } = await mrtr('tools/call', 'test_streaming_elicitation'));
    assert.equal(textOf(result), 'Streaming elicitation complete: streamed');
    assert.deepEqual(asked.map((a) => [a.key, a.params.message, a.params.requestedSchema]), [
      ['user_input', 'Streaming elicitation: please provide a value', oneField('value', 'string')],
    ]);
    checkRounds(rs, [['user_input']]);

    ({ result, asked, rounds: rs } = await mrtr('tools/call', 'test_input_required_result_capabilities'));
    assert.equal(textOf(result), 'capabilities-ok: received elicit_input,sample_input');
    assert.deepEqual(asked.map((a) => [a.kind, a.key]).sort(), [['elicitation', 'elicit_input'], ['sampling', 'sample_input']]);
    checkRounds(rs, [['elicit_input', 'sample_input']]);
  });

  test('a declined answer is asked again: the SDK gives up after inputRequired.maxRounds', async () => {
    const stubborn = await connect(server, { options: { inputRequired: { maxRounds: 3 } } });
    try {
      stubborn.setElicit(() => ({ action: 'decline' }));
      await assert.rejects(
        stubborn.client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} }),
        (e) => e instanceof SdkError && e.code === SdkErrorCode.InputRequiredRoundsExceeded,
      );
      await stubborn.settled();
      const rs = rounds(stubborn, 'tools/call', 'test_input_required_result_elicitation');
      // The SDK counts retries: the first call, then three answered rounds, then it stops.
      assert.equal(rs.length, 4, JSON.stringify(rs));
      for (const [, r] of rs) assert.deepEqual(Object.keys(r.result.inputRequests), ['user_name']);
      assert.deepEqual(stubborn.of('elicitation').map((a) => a.key), ['user_name', 'user_name', 'user_name']);
      for (const [q] of rs.slice(1)) assert.deepEqual(q.params.inputResponses, { user_name: { action: 'decline' } });
      checkWire(stubborn);
    } finally {
      await stubborn.close();
    }
  });

  test('manual mode (allowInputRequired): a tampered requestState or malformed inputResponses is -32602 (HTTP 400); the genuine state completes', async () => {
    const name = 'test_input_required_result_tampered_state';
    const first = await c.client.callTool({ name, arguments: {} }, { allowInputRequired: true });
    assert.equal(first.resultType, 'input_required');
    assert.deepEqual(Object.keys(first.inputRequests), ['confirm']);
    assert.deepEqual(first.inputRequests.confirm, {
      method: 'elicitation/create',
      params: { message: 'Please confirm', requestedSchema: oneField('ok', 'boolean') },
    });
    const state = first.requestState;
    assert.ok(typeof state === 'string' && state.length > 1);
    const inputResponses = { confirm: { action: 'accept', content: { ok: true } } };
    const flipped = (state[0] === 'A' ? 'B' : 'A') + state.slice(1);
    for (const tampered of [`${state}-TAMPERED`, state.slice(0, -1), flipped, '{}']) {
      const before = c.exchanges('tools/call', name).length;
      await rejectsWith(c.client.callTool({ name, arguments: {}, inputResponses, requestState: tampered }, { allowInputRequired: true }), INVALID_PARAMS);
      await c.settled();
      const [x] = c.exchanges('tools/call', name).slice(before);
      assert.equal(x.request.params.requestState, tampered);
      assert.equal(x.status, 400, describeExchange(x));
    }
    const done = await c.client.callTool({ name, arguments: {}, inputResponses, requestState: state }, { allowInputRequired: true });
    assert.equal(textOf(done), 'integrity-ok: state verified');
    // inputResponses that are not a map of result objects are -32602 too, never a completed call.
    for (const bad of [null, { user_name: 12345 }, { user_name: 'Alice' }]) {
      await rejectsWith(
        c.client.callTool({ name: 'test_input_required_result_elicitation', arguments: {}, inputResponses: bad }, { allowInputRequired: true }),
        INVALID_PARAMS,
      );
    }
    // A wrong key is asked again (input_required), and unknown extra keys are ignored.
    const again = await c.client.callTool(
      { name: 'test_input_required_result_elicitation', arguments: {}, inputResponses: { wrong_key: { action: 'accept', content: { data: 'wrong' } } } },
      { allowInputRequired: true },
    );
    assert.equal(again.resultType, 'input_required');
    assert.deepEqual(Object.keys(again.inputRequests), ['user_name']);
    const extra = await c.client.callTool(
      {
        name: 'test_input_required_result_elicitation',
        arguments: {},
        inputResponses: { user_name: { action: 'accept', content: { name: 'Alice' } }, unknown_extra_key: { action: 'accept', content: { foo: 'bar' } } },
      },
      { allowInputRequired: true },
    );
    assert.equal(textOf(extra), 'Hello, Alice!');
    // And through the SDK's driver.
    assert.equal(textOf((await mrtr('tools/call', name)).result), 'integrity-ok: state verified');
  });

  test('a client without sampling/elicitation/roots: -32021 with data.requiredCapabilities (HTTP 400), nothing asked', async () => {
    const bare = await connect(server, { sampling: false, elicitation: false, roots: false });
    try {
      const cases = [
        ['test_missing_capability', {}, 'sampling'],
        ['test_sampling', { prompt: 'hi' }, 'sampling'],
        ['test_elicitation', { message: 'hi' }, 'elicitation'],
        ['test_elicitation_sep1034_defaults', {}, 'elicitation'],
        ['test_input_required_result_elicitation', {}, 'elicitation'],
        ['test_input_required_result_list_roots', {}, 'roots'],
        ['test_streaming_elicitation', {}, 'elicitation'],
      ];
      for (const [name, args, cap] of cases) {
        const e = await rejectsWith(bare.client.callTool({ name, arguments: args }), MISSING_CAPABILITY);
        assert.deepEqual(e.data, { requiredCapabilities: { [cap]: {} } }, name);
        await bare.settled();
        const [x] = bare.exchanges('tools/call', name).slice(-1);
        assert.equal(x.status, 400, describeExchange(x));
        assert.deepEqual(x.request.params._meta[CLIENT_CAPABILITIES_META_KEY], {});
      }
      await rejectsWith(bare.client.getPrompt({ name: 'test_input_required_result_prompt' }), MISSING_CAPABILITY);
      assert.equal(textOf(await bare.client.callTool({ name: 'test_input_required_result_capabilities', arguments: {} })), 'No supported capabilities declared');
      assert.deepEqual(bare.asked, []);
      checkWire(bare);
    } finally {
      await bare.close();
    }
    // Sampling declared: test_missing_capability succeeds without asking anything.
    const before = c.asked.length;
    assert.equal(textOf(await c.client.callTool({ name: 'test_missing_capability', arguments: {} })), 'Success');
    assert.equal(c.asked.length, before);

    // Sampling only: test_input_required_result_capabilities asks for sample_input alone.
    const samplingOnly = await connect(server, { elicitation: false, roots: false });
    try {
      const first = await samplingOnly.client.callTool({ name: 'test_input_required_result_capabilities', arguments: {} }, { allowInputRequired: true });
      assert.deepEqual(Object.fromEntries(Object.entries(first.inputRequests).map(([k, v]) => [k, v.method])), { sample_input: 'sampling/createMessage' });
      const r = await samplingOnly.client.callTool({ name: 'test_input_required_result_capabilities', arguments: {} });
      assert.equal(textOf(r), 'capabilities-ok: received sample_input');
      assert.deepEqual(samplingOnly.asked.map((a) => [a.kind, a.key, a.params]), [
        ['sampling', 'sample_input', { messages: [{ role: 'user', content: { type: 'text', text: 'Sample request' } }], maxTokens: 50 }],
      ]);
      checkWire(samplingOnly);
    } finally {
      await samplingOnly.close();
    }
  });

  // ---- subscriptions/listen --------------------------------------------------------------------

  test('subscriptions/listen: acknowledged first, list_changed tagged with the subscription id, closed by the client', async () => {
    const sub = await c.client.listen({ toolsListChanged: true });
    assert.deepEqual(sub.honoredFilter, { toolsListChanged: true });
    const before = c.notifications.length;
    assert.equal(textOf(await c.client.callTool({ name: 'test_trigger_tool_change', arguments: {} })), 'Tool list change triggered');
    const changed = () => c.notifications.slice(before).filter((n) => n.method.endsWith('/list_changed'));
    assert.ok(await waitFor(() => changed().length >= 1, 3000), 'a list_changed notification arrived');
    const [x] = c.exchanges('subscriptions/listen').slice(-1);
    const listenId = x.request.id;
    assert.equal(typeof listenId, 'string', 'the SDK uses string ids for listen requests');
    assert.deepEqual(changed(), [{ method: 'notifications/tools/list_changed', params: { _meta: { [SUBSCRIPTION_ID_META_KEY]: listenId } } }]);
    assert.equal(x.status, 200);
    assert.equal(x.contentType, 'text/event-stream');
    assert.deepEqual(x.request.params.notifications, { toolsListChanged: true });
    assert.deepEqual(x.rec.messages, [
      { jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { notifications: { toolsListChanged: true }, _meta: { [SUBSCRIPTION_ID_META_KEY]: listenId } } },
      { jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: { _meta: { [SUBSCRIPTION_ID_META_KEY]: listenId } } },
    ]);
    // The trigger's own response stream carries no list_changed (it goes to listeners only).
    const [trigger] = c.exchanges('tools/call', 'test_trigger_tool_change').slice(-1);
    assert.deepEqual(trigger.notifications, []);
    // The triggers do not change the list.
    assert.deepEqual((await c.client.listTools({}, { cacheMode: 'refresh' })).tools.map((t) => t.name), TOOLS);

    // close(): the SDK aborts the stream and posts notifications/cancelled for the listen id.
    await sub.close();
    assert.equal(await sub.closed, 'local');
    await c.settled();
    const cancels = c.exchanges('notifications/cancelled').filter((n) => n.request.params.requestId === listenId);
    assert.deepEqual(cancels.map((n) => n.status), [202]);
    assert.ok(await waitFor(() => x.rec.done, 2000));
    assert.equal(x.rec.error, 'AbortError');
    assert.equal(x.response, undefined, 'the server did not answer a cancelled listen');
    // The server keeps serving, and the trigger still works with no one listening.
    assert.equal(textOf(await c.client.callTool({ name: 'test_trigger_tool_change', arguments: {} })), 'Tool list change triggered');
  });

  test('subscriptions/listen filters: a prompts-only stream never sees a tool change, and vice versa', async () => {
    const prompts = await c.client.listen({ promptsListChanged: true });
    const tools = await c.client.listen({ toolsListChanged: true });
    try {
      assert.deepEqual(prompts.honoredFilter, { promptsListChanged: true });
      const [px, tx] = c.exchanges('subscriptions/listen').slice(-2);
      const on = (x) => x.rec.messages.slice(1).map((m) => m.method);
      assert.equal(textOf(await c.client.callTool({ name: 'test_trigger_tool_change', arguments: {} })), 'Tool list change triggered');
      assert.ok(await waitFor(() => on(tx).length === 1, 3000));
      assert.equal(textOf(await c.client.callTool({ name: 'test_trigger_prompt_change', arguments: {} })), 'Prompt list change triggered');
      assert.ok(await waitFor(() => on(px).length === 1, 3000));
      await sleep(200);
      assert.deepEqual(on(tx), ['notifications/tools/list_changed']);
      assert.deepEqual(on(px), ['notifications/prompts/list_changed']);
      assert.notEqual(px.request.id, tx.request.id);
    } finally {
      await prompts.close();
      await tools.close();
    }
    // Resource subscriptions on a listen stream: the ack names the URIs the server keeps
    // (a subscribable resource it has), and leaves out the ones it does not have.
    const resources = await c.client.listen({
      resourcesListChanged: true,
      resourceSubscriptions: ['test://watched-resource', 'test://no-such-resource'],
    });
    try {
      assert.deepEqual(resources.honoredFilter, { resourcesListChanged: true, resourceSubscriptions: ['test://watched-resource'] });
    } finally {
      await resources.close();
    }
  });

  test('ClientOptions.listChanged: the SDK opens a listen at connect and refreshes the tool list on a change', async () => {
    const changes = [];
    const watcher = await connect(server, {
      options: { listChanged: { tools: { debounceMs: 0, onChanged: (error, tools) => changes.push([error, tools?.map((t) => t.name)]) } } },
    });
    try {
      const sub = watcher.client.autoOpenedSubscription;
      assert.ok(sub, 'a subscription was opened');
      assert.deepEqual(sub.honoredFilter, { toolsListChanged: true });
      assert.equal(textOf(await c.client.callTool({ name: 'test_trigger_tool_change', arguments: {} })), 'Tool list change triggered');
      assert.ok(await waitFor(() => changes.length >= 1, 3000), 'onChanged was called');
      assert.deepEqual(changes, [[null, TOOLS]]);
      await watcher.settled();
      assert.deepEqual(watcher.records.map((r) => r.body.method), ['server/discover', 'subscriptions/listen', 'tools/list']);
      checkWire(watcher);
    } finally {
      await watcher.close();
    }
  });

  // ---- the whole exchange ----------------------------------------------------------------------

  test('transport: stateless POSTs with the 2026 headers and _meta, statuses, resultType and cache hints everywhere, no SDK errors', async () => {
    await c.settled();
    checkWire(c);
    const methods = new Set(c.records.map((r) => r.body?.method));
    for (const m of ['server/discover', 'tools/list', 'tools/call', 'prompts/list', 'prompts/get', 'resources/list', 'resources/templates/list', 'resources/read', 'completion/complete', 'subscriptions/listen', 'notifications/cancelled']) {
      assert.ok(methods.has(m), `${m} was exercised`);
    }
    assert.deepEqual(c.sdkErrors, []);
    assert.ok(server.alive());
  });
});

describe('pagination (--page-size 4): the SDK walks every page of every list', { timeout: 60_000 }, () => {
  let server;
  let c;

  before(async () => {
    server = await startServer(['--page-size', '4']);
    c = await connect(server);
  });

  after(async () => {
    await c?.close();
    await server?.stop();
  });

  /** The pages of one aggregated walk, from the wire (`id` names an item). */
  function pages(method, key, since, id = (item) => item.name) {
    return c.exchanges(method).slice(since).map((x) => ({
      cursor: x.request.params?.cursor,
      items: x.response.result[key].map(id),
      next: x.response.result.nextCursor,
      result: x.response.result,
    }));
  }

  function checkWalk(walk, expected, pageSize) {
    assert.equal(walk.length, Math.ceil(expected.length / pageSize));
    assert.equal(walk[0].cursor, undefined, 'the walk starts without a cursor');
    for (let i = 0; i < walk.length; i++) {
      assert.deepEqual(walk[i].items, expected.slice(i * pageSize, (i + 1) * pageSize), `page ${i + 1}`);
      if (i > 0) assert.equal(walk[i].cursor, walk[i - 1].next, 'each page asks for the previous nextCursor');
      assert.equal(walk[i].next === undefined, i === walk.length - 1, 'only the last page has no nextCursor');
      assert.equal(walk[i].result.resultType, 'complete');
      assert.equal(walk[i].result.ttlMs, LIST_TTL_MS);
      assert.equal(walk[i].result.cacheScope, 'public');
    }
    const all = walk.flatMap((p) => p.items);
    assert.equal(new Set(all).size, all.length, 'no duplicates');
    assert.deepEqual(all, expected);
  }

  // 35 tools (the fixtures and the tasks ones) in 9 pages of 4.
  const TOOL_PAGES = Math.ceil(TOOLS.length / 4);

  test(`tools/list: ${TOOLS.length} tools in ${TOOL_PAGES} pages of 4, in order, no duplicates; listTools() aggregates them`, async () => {
    const since = c.exchanges('tools/list').length;
    const listed = await c.client.listTools();
    assert.deepEqual(listed.tools.map((t) => t.name), TOOLS);
    assert.equal(listed.nextCursor, undefined);
    await c.settled();
    checkWalk(pages('tools/list', 'tools', since), TOOLS, 4);
  });

  test('tools/list page by page with explicit cursors (the SDK\'s per-page path)', async () => {
    let page = await c.client.request({ method: 'tools/list', params: {} });
    const seen = [...page.tools.map((t) => t.name)];
    let count = 1;
    while (page.nextCursor !== undefined) {
      page = await c.client.listTools({ cursor: page.nextCursor });
      assert.ok(page.tools.length <= 4);
      seen.push(...page.tools.map((t) => t.name));
      count++;
      assert.ok(count <= TOOL_PAGES, 'the walk ends');
    }
    assert.equal(count, TOOL_PAGES);
    assert.deepEqual(seen, TOOLS);
    await rejectsWith(c.client.listTools({ cursor: 'AAAA' }), INVALID_PARAMS);
  });

  test('prompts/list (5 in 2 pages), resources/list (4), resources/templates/list (1)', async () => {
    let since = c.exchanges('prompts/list').length;
    assert.deepEqual((await c.client.listPrompts()).prompts.map((p) => p.name), PROMPTS);
    await c.settled();
    checkWalk(pages('prompts/list', 'prompts', since), PROMPTS, 4);

    since = c.exchanges('resources/list').length;
    assert.deepEqual((await c.client.listResources()).resources.map((r) => r.uri), RESOURCES.map(([uri]) => uri));
    await c.settled();
    checkWalk(pages('resources/list', 'resources', since, (r) => r.uri), RESOURCES.map(([uri]) => uri), 4);

    since = c.exchanges('resources/templates/list').length;
    assert.deepEqual((await c.client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate), [TEMPLATE]);
    await c.settled();
    checkWalk(pages('resources/templates/list', 'resourceTemplates', since, (t) => t.uriTemplate), [TEMPLATE], 4);
    // A cursor of one list is not a cursor of another.
    const promptCursor = c.exchanges('prompts/list')[0].response.result.nextCursor;
    assert.equal(typeof promptCursor, 'string');
    await rejectsWith(c.client.listTools({ cursor: promptCursor }), INVALID_PARAMS);
    await c.settled();
    checkWire(c);
  });
});

describe('graceful shutdown: an open listen gets its closing response', { timeout: 30_000 }, () => {
  test('SIGINT: the listen stream ends with {resultType: "complete"}, the SDK reports "graceful", the server exits 0', async () => {
    const server = await startServer();
    const c = await connect(server);
    try {
      const sub = await c.client.listen({ toolsListChanged: true });
      server.proc.kill('SIGINT');
      let timer;
      const outcome = await Promise.race([sub.closed, new Promise((resolve) => (timer = setTimeout(resolve, 5000, 'timeout')))]);
      clearTimeout(timer);
      assert.equal(outcome, 'graceful');
      const [x] = c.exchanges('subscriptions/listen');
      assert.ok(await waitFor(() => x.rec.messages.length === 2, 2000), JSON.stringify(x.rec.messages));
      assert.deepEqual(x.rec.messages.map((m) => m.method ?? 'response'), ['notifications/subscriptions/acknowledged', 'response']);
      assert.deepEqual(exchangeOf(x.rec).response, { jsonrpc: '2.0', id: x.request.id, result: { resultType: 'complete', _meta: { [SUBSCRIPTION_ID_META_KEY]: x.request.id } } });
      checkWire(c);
      // Delivered at once; the process then waits for idle keep-alive connections (drain_timeout).
      assert.deepEqual(await server.exited, { code: 0, signal: null });
    } finally {
      await c.close();
      await server.stop();
    }
  });
});
