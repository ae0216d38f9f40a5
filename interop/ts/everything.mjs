// Interop suite: the official TypeScript MCP SDK client (@modelcontextprotocol/sdk, pinned in
// package.json) against the mcp-rs `everything` example server over stdio, or over Streamable
// HTTP with MCP_TRANSPORT=http (`everything --http 127.0.0.1:0`, one server per test, the SDK's
// StreamableHTTPClientTransport; session-wide notifications then come on the GET stream). The TypeScript SDK
// 1.x speaks only the handshake era (initialize, 2025-11-25). That is also the era in which
// the conformance suite uses this very SDK version against the fixtures. The fixture contract
// is in the project notes (everything-contract.md), and comments cite its sections as §N.
//
//   node --test --test-reporter=spec everything.mjs        (from interop/ts, after npm install)
//
// Which server to launch:
//   MCP_EVERYTHING_CMD  the everything binary (default: <repo>/target/debug/everything), run
//                       with no arguments. When the file is run directly (`node everything.mjs PATH`),
//                       argv[2] wins.
//   MCP_EXPECT_SERVER_NAME  the serverInfo.name to expect (default: mcp-rs-everything; the
//                       script sets it for embedded-http, which serves the same fixtures)
//   MCP_DESELECT        test names not to register, one per line (exact names; each must
//                       exist). scripts/test-interop.sh uses it for embedded-http's missing
//                       features; every deselected name is printed, and never counted as skipped.
//   MCP_SERVER_STDERR   "inherit" to stream the server's stderr log (default: captured, and
//                       printed at the end when MCP_INTEROP_VERBOSE is set)
//
// All traffic goes through the SDK's public API: Client, StdioClientTransport, and
// setRequestHandler for the server's sampling/createMessage, elicitation/create and
// roots/list requests. The SDK validates every message against its own Zod schemas. The
// transport is only observed (one copy of each message in each direction) to check the
// exact requests the server sent. The SDK's Zod parsing drops keys it does not model before
// a handler sees a request.

import { after, before, describe, test as nodeTest } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  LATEST_PROTOCOL_VERSION,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  PromptListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { sleep, waitFor } from './util.mjs';
import { ELICIT_ANSWERS, SAMPLING_ANSWERS, DEFAULT_SAMPLING_ANSWER, ROOTS, TOOL_LOGS, SEP1034_MESSAGE, SEP1330_MESSAGE, oneField, textOf, TOOLS, assertToolNames, PROMPTS, RESOURCES, SKILLS_EXTENSION, SKILL_RESOURCE, TEMPLATE, JSON_SCHEMA_2020_12, ELICITATION_SCHEMA } from './fixtures.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const SERVER_CMD =
  (process.argv[2] && !process.argv[2].startsWith('-') ? process.argv[2] : undefined) ??
  process.env.MCP_EVERYTHING_CMD ??
  path.resolve(here, '../../target/debug/everything');
const TRANSPORT = process.env.MCP_TRANSPORT ?? 'stdio'; // stdio, or http (everything --http, one server per test)

const RESOURCE_NOT_FOUND = -32002; // handshake-era code (2026-07-28 uses -32602)

// ---- the fixture contract -------------------------------------------------------------------

const SERVER_NAME = process.env.MCP_EXPECT_SERVER_NAME || 'mcp-rs-everything';

// MCP_DESELECT: exact test names left unregistered (not skipped: they do not run or count).
const DESELECT = new Set((process.env.MCP_DESELECT ?? '').split('\n').map((n) => n.trim()).filter(Boolean));
const deselected = new Set();
function test(name, ...rest) {
  if (DESELECT.has(name)) {
    deselected.add(name);
    console.log(`deselected (MCP_DESELECT): ${name}`);
    return;
  }
  nodeTest(name, ...rest);
}

const SEP1034_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'User name', default: 'John Doe' },
    age: { type: 'integer', description: 'User age', default: 30 },
    score: { type: 'number', description: 'User score', default: 95.5 },
    status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
    verified: { type: 'boolean', description: 'Verification status', default: true },
  },
  required: [],
};
const SEP1330_SCHEMA = {
  type: 'object',
  properties: {
    untitledSingle: { type: 'string', description: 'Select one option', enum: ['option1', 'option2', 'option3'] },
    titledSingle: {
      type: 'string',
      description: 'Select one option with titles',
      oneOf: [
        { const: 'value1', title: 'First Option' },
        { const: 'value2', title: 'Second Option' },
        { const: 'value3', title: 'Third Option' },
      ],
    },
    legacyEnum: {
      type: 'string',
      description: 'Select one option (legacy)',
      enum: ['opt1', 'opt2', 'opt3'],
      enumNames: ['Option One', 'Option Two', 'Option Three'],
    },
    untitledMulti: {
      type: 'array',
      description: 'Select multiple options',
      minItems: 1,
      maxItems: 3,
      items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
    },
    titledMulti: {
      type: 'array',
      description: 'Select multiple options with titles',
      minItems: 1,
      maxItems: 3,
      items: {
        anyOf: [
          { const: 'value1', title: 'First Choice' },
          { const: 'value2', title: 'Second Choice' },
          { const: 'value3', title: 'Third Choice' },
        ],
      },
    },
  },
  required: [],
};

function errorText(result) {
  assert.equal(result.isError, true, `expected isError: ${JSON.stringify(result)}`);
  const text = result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  assert.ok(text.length > 0, 'an error result explains itself');
  return text;
}

function jsonAfter(text, prefix) {
  assert.ok(text.startsWith(prefix), `${JSON.stringify(text)} starts with ${JSON.stringify(prefix)}`);
  return JSON.parse(text.slice(prefix.length));
}

async function rejectsWith(promise, code) {
  let error;
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof McpError, String(e));
    assert.equal(e.code, code, e.message);
    error = e;
    return true;
  });
  return error;
}

function isPng(base64) {
  const bytes = Buffer.from(base64, 'base64');
  return bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
}

/** A connected Client on a fresh server, with recorded traffic and answering handlers. */
async function connect({ sampling = true, elicitation = true, roots = true } = {}) {
  const sent = [];
  const received = [];
  const sdkErrors = [];
  const asked = []; // { kind, params, raw } for every server request a handler answered
  const notifications = [];
  let stderr = '';
  let elicitOverride;

  let server; // the HTTP server process (MCP_TRANSPORT=http)
  let transport;
  if (TRANSPORT === 'http') {
    server = spawn(SERVER_CMD, ['--http', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    const url = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no address from everything --http: ${stderr}`)), 10_000);
      server.stderr.on('data', (chunk) => {
        stderr += chunk.toString();
        const m = /listening on (\S+)\r?\n/.exec(stderr); // the whole line: stderr arrives in pieces
        if (m) {
          clearTimeout(timer);
          resolve(`http://${m[1]}/mcp`);
        }
      });
      server.on('exit', (code) => reject(new Error(`everything --http exited (${code}): ${stderr}`)));
    }).catch((e) => {
      server.kill();
      throw e;
    });
    transport = new StreamableHTTPClientTransport(new URL(url));
  } else {
    transport = new StdioClientTransport({
      command: SERVER_CMD,
      args: [],
      stderr: process.env.MCP_SERVER_STDERR === 'inherit' ? 'inherit' : 'pipe',
    });
    transport.stderr?.on('data', (chunk) => {
      stderr += chunk.toString();
    });
  }
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    sent.push({ at: Date.now(), message });
    return send(message, options);
  };

  const capabilities = {};
  if (sampling) capabilities.sampling = {};
  if (elicitation) capabilities.elicitation = {};
  if (roots) capabilities.roots = { listChanged: true };
  const client = new Client({ name: 'mcp-rs-interop-ts', version: '0.1.0' }, { capabilities });
  client.onerror = (e) => sdkErrors.push(String(e?.message ?? e));

  // The raw request as the server wrote it (the handler only sees the SDK's parsed copy).
  const rawOf = (extra) => received.find((m) => m.message.method && m.message.id === extra.requestId)?.message;

  if (sampling) {
    client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
      asked.push({ kind: 'sampling', params: request.params, raw: rawOf(extra) });
      const first = request.params.messages[0]?.content;
      const text = SAMPLING_ANSWERS[first?.text] ?? DEFAULT_SAMPLING_ANSWER;
      return { role: 'assistant', content: { type: 'text', text }, model: 'test-model', stopReason: 'endTurn' };
    });
  }
  if (elicitation) {
    client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
      asked.push({ kind: 'elicitation', params: request.params, raw: rawOf(extra) });
      const override = elicitOverride?.(request.params);
      if (override) return override;
      const content = ELICIT_ANSWERS[request.params.message];
      if (!content) throw new McpError(ErrorCode.InvalidParams, `unexpected elicitation: ${request.params.message}`);
      return { action: 'accept', content };
    });
  }
  if (roots) {
    client.setRequestHandler(ListRootsRequestSchema, async (request, extra) => {
      asked.push({ kind: 'roots', params: request.params, raw: rawOf(extra) });
      return { roots: ROOTS };
    });
  }
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => notifications.push(n));
  client.setNotificationHandler(ToolListChangedNotificationSchema, (n) => notifications.push(n));
  client.setNotificationHandler(PromptListChangedNotificationSchema, (n) => notifications.push(n));

  let negotiatedVersion;
  transport.setProtocolVersion = (v) => {
    negotiatedVersion = v;
  };
  // Record before the SDK sees a message: the handlers above look their raw request up.
  const start = transport.start.bind(transport);
  transport.start = async () => {
    const onmessage = transport.onmessage;
    transport.onmessage = (message, extra) => {
      received.push({ at: Date.now(), message });
      onmessage?.(message, extra);
    };
    return start();
  };
  await client.connect(transport);

  return {
    client,
    sent,
    received,
    sdkErrors,
    asked,
    notifications,
    negotiatedVersion: () => negotiatedVersion,
    stderr: () => stderr,
    setElicit(fn) {
      elicitOverride = fn;
    },
    of(kind) {
      return asked.filter((a) => a.kind === kind);
    },
    /** [request, response] pairs of client requests, by method and params.name. */
    exchanges(method, name) {
      return sent
        .filter((s) => s.message.method === method && s.message.id !== undefined && (name === undefined || s.message.params?.name === name))
        .map((s) => [s.message, received.find((r) => !r.message.method && r.message.id === s.message.id)?.message]);
    },
    /** Notifications of `method` received between a request and its response. */
    notificationsDuring(requestId, method) {
      const sentAt = sent.findIndex((s) => s.message.id === requestId && s.message.method);
      assert.ok(sentAt >= 0);
      const t0 = sent[sentAt].at;
      const answer = received.findIndex((r) => !r.message.method && r.message.id === requestId);
      const window = received.slice(0, answer < 0 ? received.length : answer).filter((r) => r.at >= t0);
      return window.map((r) => r.message).filter((m) => m.method === method && m.id === undefined);
    },
    serverRequests() {
      return received.map((r) => r.message).filter((m) => m.method && m.id !== undefined);
    },
    async close() {
      await client.close();
      server?.kill();
      if (stderr && process.env.MCP_INTEROP_VERBOSE) {
        process.stderr.write(`--- everything stderr ---\n${stderr}--- end ---\n`);
      }
    },
  };
}

describe(`mcp-rs everything over ${TRANSPORT} via @modelcontextprotocol/sdk (${path.relative(process.cwd(), SERVER_CMD) || SERVER_CMD})`, { timeout: 180_000 }, () => {
  let c;

  before(async () => {
    c = await connect();
  });

  after(async () => {
    await c?.close();
  });

  // ---- lifecycle -------------------------------------------------------------------------------

  test('initialize: the SDK\'s latest version, server info and capabilities', () => {
    assert.equal(c.negotiatedVersion(), LATEST_PROTOCOL_VERSION);
    assert.equal(c.client.getServerVersion().name, SERVER_NAME);
    const caps = c.client.getServerCapabilities();
    assert.deepEqual(caps.tools, { listChanged: true });
    assert.deepEqual(caps.prompts, { listChanged: true });
    assert.deepEqual(caps.resources, { subscribe: true, listChanged: true });
    assert.ok(caps.logging, 'logging capability');
    assert.ok(caps.completions, 'completions capability');
  });

  test('ping and logging/setLevel answer {}', async () => {
    assert.deepEqual(await c.client.ping(), {});
    assert.deepEqual(await c.client.setLoggingLevel('info'), {});
  });

  // ---- tools -----------------------------------------------------------------------------------

  test('tools/list: every fixture on one page, in order, each with a description and an object schema', async () => {
    const page = await c.client.listTools();
    assert.equal(page.nextCursor, undefined, 'one page (the conformance suite never follows nextCursor)');
    assertToolNames(page.tools.map((t) => t.name));
    for (const tool of page.tools) {
      assert.ok(tool.description, `${tool.name}: description`);
      assert.equal(tool.inputSchema.type, 'object', `${tool.name}: inputSchema.type`);
    }
    const byName = Object.fromEntries(page.tools.map((t) => [t.name, t]));
    assert.deepEqual(byName.json_schema_2020_12_tool.inputSchema, JSON_SCHEMA_2020_12, 'the 2020-12 schema comes back unchanged');
    const region = byName.test_custom_header.inputSchema.properties.region;
    assert.equal(region.type, 'string');
    assert.equal(region['x-mcp-header'], 'Region');
    assert.deepEqual(byName.test_sampling.inputSchema.required, ['prompt']);
    assert.deepEqual(byName.test_elicitation.inputSchema.required, ['message']);
    await rejectsWith(c.client.listTools({ cursor: 'not-a-cursor-we-were-given' }), ErrorCode.InvalidParams);
  });

  test('content tools: text (without arguments), image, audio, embedded resource, mixed', async () => {
    const simple = await c.client.callTool({ name: 'test_simple_text' });
    assert.equal(textOf(simple), 'This is a simple text response for testing.');
    const [request] = c.exchanges('tools/call', 'test_simple_text').at(-1);
    assert.equal(request.params.arguments, undefined, 'the call carried no arguments');

    const image = await c.client.callTool({ name: 'test_image_content', arguments: {} });
    assert.equal(image.content.length, 1);
    assert.equal(image.content[0].type, 'image');
    assert.equal(image.content[0].mimeType, 'image/png');
    assert.ok(isPng(image.content[0].data), 'a PNG');

    const audio = await c.client.callTool({ name: 'test_audio_content', arguments: {} });
    assert.equal(audio.content[0].type, 'audio');
    assert.equal(audio.content[0].mimeType, 'audio/wav');
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
    assert.equal(mixed.content[1].mimeType, 'image/png');
    const res = mixed.content[2].resource;
    assert.equal(res.uri, 'test://mixed-content-resource');
    assert.equal(res.mimeType, 'application/json');
    assert.deepEqual(JSON.parse(res.text), { test: 'data', value: 123 });
  });

  test('test_error_handling is an isError result; an unknown tool is -32602', async () => {
    const r = await c.client.callTool({ name: 'test_error_handling', arguments: {} });
    assert.equal(errorText(r), 'This tool intentionally returns an error for testing');
    await rejectsWith(c.client.callTool({ name: 'no_such_tool', arguments: {} }), ErrorCode.InvalidParams);
  });

  test('test_reconnection answers', async () => {
    assert.equal(
      textOf(await c.client.callTool({ name: 'test_reconnection', arguments: {} })),
      'Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.',
    );
  });

  test('json_schema_2020_12_tool and test_custom_header answer', async () => {
    const args = { name: 'Ada', contactMethod: 'phone', phone: '+44 20 7946 0000' };
    const r = await c.client.callTool({ name: 'json_schema_2020_12_tool', arguments: args });
    assert.deepEqual(jsonAfter(textOf(r), 'JSON Schema 2020-12 tool called with: '), args);
    for (const value of ['eu-west-1', '=?base64?SGVsbG8=?=', 'héllo']) {
      const h = await c.client.callTool({ name: 'test_custom_header', arguments: { region: value } });
      assert.equal(textOf(h), `Region: ${value}`);
    }
  });

  test('progress: 0, 50, 100 of 100 before the result, only when a progressToken is sent', async (t) => {
    const updates = [];
    const errorsBefore = c.sdkErrors.length;
    const r = await c.client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
      onprogress: (p) => updates.push([p.progress, p.total]),
    });
    assert.notEqual(r.isError, true);
    const [request] = c.exchanges('tools/call', 'test_tool_with_progress').at(-1);
    const token = request.params._meta?.progressToken;
    assert.notEqual(token, undefined, 'the SDK sent a progressToken');
    const wire = c.notificationsDuring(request.id, 'notifications/progress').filter((m) => m.params.progressToken === token);
    assert.deepEqual(wire.map((m) => [m.params.progress, m.params.total]), [[0, 100], [50, 100], [100, 100]]);
    // SDK 1.x can lose a progress notification that shares a stdout chunk with the response
    // (typescript-sdk#2580); only such trailing losses are tolerated here.
    assert.deepEqual(updates, [[0, 100], [50, 100], [100, 100]].slice(0, updates.length));
    assert.ok(updates.length >= 1, 'onprogress was called');
    const lost = c.sdkErrors.slice(errorsBefore);
    if (updates.length < 3) {
      t.diagnostic(`onprogress saw ${updates.length}/3 (typescript-sdk#2580)`);
      for (const e of lost) assert.match(e, /progress notification for an unknown token/);
    } else {
      assert.deepEqual(lost, []);
    }

    const before = c.received.length;
    await c.client.callTool({ name: 'test_tool_with_progress', arguments: {} });
    assert.deepEqual(c.received.slice(before).filter((m) => m.message.method === 'notifications/progress'), []);
  });

  test('logging: setLevel sets the threshold for the tools\' info messages', async () => {
    const logged = async (name) => {
      const r = await c.client.callTool({ name, arguments: {} });
      assert.notEqual(r.isError, true);
      const [request] = c.exchanges('tools/call', name).at(-1);
      return c.notificationsDuring(request.id, 'notifications/message').map((m) => m.params);
    };
    await c.client.setLoggingLevel('debug');
    const logs = await logged('test_tool_with_logging');
    assert.deepEqual(logs.map((p) => [p.level, p.data]), TOOL_LOGS.map((d) => ['info', d]));
    assert.ok(await waitFor(() => TOOL_LOGS.every((d) => c.notifications.some((n) => n.params?.data === d))), 'the SDK handler saw them');
    await c.client.setLoggingLevel('warning');
    assert.deepEqual(await logged('test_tool_with_logging'), []);
    assert.deepEqual(await logged('test_logging_tool'), []);
    await c.client.setLoggingLevel('info');
    assert.deepEqual((await logged('test_logging_tool')).map((p) => [p.level, p.data]), [['info', 'Diagnostic trace logging activated']]);
    assert.equal(textOf(await c.client.callTool({ name: 'test_tool_with_logging', arguments: {} })), 'Tool with logging executed successfully');
  });

  // ---- resources -------------------------------------------------------------------------------

  test('resources/list and resources/templates/list', async () => {
    const listed = await c.client.listResources();
    assert.equal(listed.nextCursor, undefined);
    // A server declaring the skills extension (everything; not embedded-http) also lists its
    // skill's SKILL.md, after the fixtures.
    const skills = Boolean(c.client.getServerCapabilities()?.extensions?.[SKILLS_EXTENSION]);
    assert.deepEqual(
      listed.resources.map((r) => [r.uri, r.name, r.mimeType]),
      [...RESOURCES, ...(skills ? [SKILL_RESOURCE] : [])],
    );
    for (const r of listed.resources) assert.ok(r.description, `${r.uri}: description`);
    const templates = await c.client.listResourceTemplates();
    assert.deepEqual(templates.resourceTemplates.map((t) => [t.uriTemplate, t.name, t.mimeType]), [[TEMPLATE, 'template', 'application/json']]);
    assert.ok(templates.resourceTemplates[0].description);
  });

  test('resources/read: static text, static binary, watched, templated', async () => {
    assert.deepEqual((await c.client.readResource({ uri: 'test://static-text' })).contents, [
      { uri: 'test://static-text', mimeType: 'text/plain', text: 'This is the content of the static text resource.' },
    ]);
    const binary = (await c.client.readResource({ uri: 'test://static-binary' })).contents;
    assert.equal(binary.length, 1);
    assert.equal(binary[0].uri, 'test://static-binary');
    assert.equal(binary[0].mimeType, 'image/png');
    assert.ok(isPng(binary[0].blob));
    assert.deepEqual((await c.client.readResource({ uri: 'test://watched-resource' })).contents, [
      { uri: 'test://watched-resource', mimeType: 'text/plain', text: 'Watched resource content' },
    ]);
    for (const id of ['123', 'abc-42']) {
      const uri = `test://template/${id}/data`;
      const [content] = (await c.client.readResource({ uri })).contents;
      assert.equal(content.uri, uri);
      assert.equal(content.mimeType, 'application/json');
      assert.deepEqual(JSON.parse(content.text), { id, templateTest: true, data: `Data for ID: ${id}` });
    }
  });

  test('resources/read of an unknown URI: -32002 with data.uri', async () => {
    const uri = 'test://nonexistent-resource-for-conformance-testing';
    const e = await rejectsWith(c.client.readResource({ uri }), RESOURCE_NOT_FOUND);
    assert.equal(e.data?.uri, uri);
    await rejectsWith(c.client.readResource({ uri: 'test://template/123/other' }), RESOURCE_NOT_FOUND);
  });

  test('resources/subscribe and resources/unsubscribe answer {}', async () => {
    assert.deepEqual(await c.client.subscribeResource({ uri: 'test://watched-resource' }), {});
    assert.deepEqual(await c.client.unsubscribeResource({ uri: 'test://watched-resource' }), {});
  });

  // ---- prompts ---------------------------------------------------------------------------------

  test('prompts/list: names, descriptions, required arguments', async () => {
    const listed = await c.client.listPrompts();
    assert.equal(listed.nextCursor, undefined);
    assert.deepEqual(listed.prompts.map((p) => p.name), PROMPTS);
    for (const p of listed.prompts) assert.ok(p.description, `${p.name}: description`);
    const byName = Object.fromEntries(listed.prompts.map((p) => [p.name, p]));
    assert.deepEqual(byName.test_prompt_with_arguments.arguments.map((a) => [a.name, a.required]), [['arg1', true], ['arg2', true]]);
    assert.deepEqual(byName.test_prompt_with_embedded_resource.arguments.map((a) => [a.name, a.required]), [['resourceUri', true]]);
  });

  test('prompts/get: simple, with arguments, embedded resource, image', async () => {
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
    assert.equal(image.length, 2);
    assert.equal(image[0].content.type, 'image');
    assert.equal(image[0].content.mimeType, 'image/png');
    assert.ok(isPng(image[0].content.data));
    assert.deepEqual(image[1], { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } });
  });

  test('prompts/get errors: a missing required argument or an unknown prompt is -32602', async () => {
    await rejectsWith(c.client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'x' } }), ErrorCode.InvalidParams);
    await rejectsWith(c.client.getPrompt({ name: 'no_such_prompt' }), ErrorCode.InvalidParams);
  });

  // ---- completion ------------------------------------------------------------------------------

  test('completion/complete: a prompt argument and a template variable, by prefix', async () => {
    const values = async (ref, name, value) => {
      const r = await c.client.complete({ ref, argument: { name, value } });
      assert.notEqual(r.completion.hasMore, true);
      if (r.completion.total !== undefined) assert.equal(r.completion.total, r.completion.values.length);
      return r.completion.values;
    };
    const prompt = { type: 'ref/prompt', name: 'test_prompt_with_arguments' };
    assert.deepEqual(await values(prompt, 'arg1', 'par'), ['paris', 'park', 'party']);
    assert.deepEqual(await values(prompt, 'arg1', 'pari'), ['paris']);
    assert.deepEqual(await values(prompt, 'arg1', 'test'), []);
    const template = { type: 'ref/resource', uri: TEMPLATE };
    assert.deepEqual(await values(template, 'id', ''), ['123', '456', '789']);
    assert.deepEqual(await values(template, 'id', '7'), ['789']);
  });

  // ---- server → client requests ------------------------------------------------------------

  test('test_sampling: sampling/createMessage with the prompt and maxTokens 100', async () => {
    const before = c.asked.length;
    const r = await c.client.callTool({ name: 'test_sampling', arguments: { prompt: 'Test prompt for sampling' } });
    assert.equal(textOf(r), 'LLM response: This is a test response from the client');
    const asked = c.asked.slice(before);
    assert.deepEqual(asked.map((a) => a.kind), ['sampling']);
    assert.deepEqual(asked[0].raw.params.messages, [{ role: 'user', content: { type: 'text', text: 'Test prompt for sampling' } }]);
    assert.equal(asked[0].raw.params.maxTokens, 100);
    assert.equal(asked[0].params.maxTokens, 100);
  });

  test('test_elicitation: username + email, the answer in the text; decline reported too', async () => {
    const before = c.asked.length;
    const r = await c.client.callTool({ name: 'test_elicitation', arguments: { message: 'Please provide your information' } });
    assert.deepEqual(jsonAfter(textOf(r), 'User response: action=accept, content='), { username: 'testuser', email: 'test@example.com' });
    const [asked] = c.asked.slice(before);
    assert.equal(asked.kind, 'elicitation');
    assert.equal(asked.raw.params.message, 'Please provide your information');
    assert.deepEqual(asked.raw.params.requestedSchema, ELICITATION_SCHEMA);

    c.setElicit(() => ({ action: 'decline' }));
    try {
      const declined = await c.client.callTool({ name: 'test_elicitation', arguments: { message: 'Please provide your information' } });
      assert.equal(textOf(declined), 'User response: action=decline, content={}');
    } finally {
      c.setElicit(undefined);
    }
  });

  test('test_elicitation_sep1034_defaults: a default for every primitive type', async () => {
    const before = c.asked.length;
    const r = await c.client.callTool({ name: 'test_elicitation_sep1034_defaults', arguments: {} });
    assert.deepEqual(jsonAfter(textOf(r), 'Elicitation completed: action=accept, content='), ELICIT_ANSWERS[SEP1034_MESSAGE]);
    const [asked] = c.asked.slice(before);
    assert.equal(asked.raw.params.message, SEP1034_MESSAGE);
    assert.deepEqual(asked.raw.params.requestedSchema, SEP1034_SCHEMA);
    // What the conformance scenario inspects is the SDK-parsed copy: the defaults survive it.
    const props = asked.params.requestedSchema.properties;
    assert.deepEqual(
      Object.fromEntries(Object.entries(props).map(([k, v]) => [k, [v.type, v.default]])),
      { name: ['string', 'John Doe'], age: ['integer', 30], score: ['number', 95.5], status: ['string', 'active'], verified: ['boolean', true] },
    );
    assert.ok(props.status.enum.includes(props.status.default));
  });

  test('test_elicitation_sep1330_enums: the five enum forms', async () => {
    const before = c.asked.length;
    const r = await c.client.callTool({ name: 'test_elicitation_sep1330_enums', arguments: {} });
    assert.deepEqual(jsonAfter(textOf(r), 'Elicitation completed: action=accept, content='), ELICIT_ANSWERS[SEP1330_MESSAGE]);
    const [asked] = c.asked.slice(before);
    assert.equal(asked.raw.params.message, SEP1330_MESSAGE);
    assert.deepEqual(asked.raw.params.requestedSchema, SEP1330_SCHEMA);
    // The parsed copy keeps each form distinguishable (the scenario's checks).
    const p = asked.params.requestedSchema.properties;
    assert.ok(Array.isArray(p.untitledSingle.enum) && !p.untitledSingle.oneOf && !p.untitledSingle.enumNames);
    assert.ok(Array.isArray(p.titledSingle.oneOf) && !p.titledSingle.enum);
    assert.equal(p.legacyEnum.enumNames.length, p.legacyEnum.enum.length);
    assert.ok(Array.isArray(p.untitledMulti.items.enum) && !p.untitledMulti.items.anyOf);
    assert.ok(Array.isArray(p.titledMulti.items.anyOf) && !p.titledMulti.items.enum);
  });

  test('a client error answer to elicitation/create becomes an isError result', async () => {
    c.setElicit(() => {
      throw new McpError(-1, 'the user closed the dialog');
    });
    try {
      const r = await c.client.callTool({ name: 'test_elicitation', arguments: { message: 'Please provide your information' } });
      assert.match(errorText(r), /the user closed the dialog/);
    } finally {
      c.setElicit(undefined);
    }
  });

  // ---- the MRTR fixtures, served in the handshake era through server requests ------------------

  test('test_input_required_result_elicitation / _sampling / _list_roots', async () => {
    let before = c.asked.length;
    assert.equal(textOf(await c.client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} })), 'Hello, Alice!');
    let asked = c.asked.slice(before);
    assert.deepEqual(asked.map((a) => [a.kind, a.raw.params.message, a.raw.params.requestedSchema]), [
      ['elicitation', 'What is your name?', oneField('name', 'string')],
    ]);

    before = c.asked.length;
    assert.equal(
      textOf(await c.client.callTool({ name: 'test_input_required_result_sampling', arguments: {} })),
      'Sampling result: The capital of France is Paris.',
    );
    asked = c.asked.slice(before);
    assert.deepEqual(asked.map((a) => a.kind), ['sampling']);
    assert.deepEqual(asked[0].raw.params, {
      messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
      maxTokens: 100,
    });

    before = c.asked.length;
    assert.equal(
      textOf(await c.client.callTool({ name: 'test_input_required_result_list_roots', arguments: {} })),
      'Found 1 root(s): file:///test/root',
    );
    assert.deepEqual(c.asked.slice(before).map((a) => a.kind), ['roots']);
  });

  test('test_input_required_result_multiple_inputs: elicitation, sampling and roots in one call', async () => {
    const before = c.asked.length;
    const r = await c.client.callTool({ name: 'test_input_required_result_multiple_inputs', arguments: {} });
    assert.equal(textOf(r), 'Name: Alice; Greeting: Hello there!; Roots: 1');
    const asked = c.asked.slice(before);
    assert.deepEqual(asked.map((a) => a.kind).sort(), ['elicitation', 'roots', 'sampling']);
    const sampling = asked.find((a) => a.kind === 'sampling');
    assert.equal(sampling.raw.params.maxTokens, 50);
    assert.equal(sampling.raw.params.messages[0].content.text, 'Generate a greeting');
  });

  test('test_input_required_result_multi_round, _request_state, _tampered_state', async () => {
    let before = c.asked.length;
    assert.equal(
      textOf(await c.client.callTool({ name: 'test_input_required_result_multi_round', arguments: {} })),
      'Multi-round complete for Alice who likes blue',
    );
    assert.deepEqual(c.asked.slice(before).map((a) => a.raw.params.message), [
      'Step 1: What is your name?',
      'Step 2: What is your favorite color?',
    ]);
    before = c.asked.length;
    assert.equal(
      textOf(await c.client.callTool({ name: 'test_input_required_result_request_state', arguments: {} })),
      'state-ok: requestState validated',
    );
    assert.deepEqual(c.asked.slice(before).map((a) => [a.raw.params.message, a.raw.params.requestedSchema]), [
      ['Please confirm', oneField('ok', 'boolean')],
    ]);
    assert.equal(
      textOf(await c.client.callTool({ name: 'test_input_required_result_tampered_state', arguments: {} })),
      'integrity-ok: state verified',
    );
    // Only server requests carried the input: every call went out once, without MRTR fields.
    for (const name of ['test_input_required_result_multi_round', 'test_input_required_result_request_state']) {
      for (const [request, response] of c.exchanges('tools/call', name)) {
        assert.equal(request.params.inputResponses, undefined);
        assert.notEqual(response?.result?.resultType, 'input_required');
      }
    }
  });

  test('test_input_required_result_capabilities, test_streaming_elicitation, test_missing_capability', async () => {
    assert.equal(
      textOf(await c.client.callTool({ name: 'test_input_required_result_capabilities', arguments: {} })),
      'capabilities-ok: received elicit_input,sample_input',
    );
    assert.equal(
      textOf(await c.client.callTool({ name: 'test_streaming_elicitation', arguments: {} })),
      'Streaming elicitation complete: streamed',
    );
    assert.equal(textOf(await c.client.callTool({ name: 'test_missing_capability', arguments: {} })), 'Success');
  });

  test('test_input_required_result_prompt: prompts/get asks the client for the context', async () => {
    const before = c.asked.length;
    const prompt = await c.client.getPrompt({ name: 'test_input_required_result_prompt' });
    assert.deepEqual(prompt.messages, [{ role: 'user', content: { type: 'text', text: 'Prompt with context: test context' } }]);
    assert.deepEqual(c.asked.slice(before).map((a) => [a.raw.params.message, a.raw.params.requestedSchema]), [
      ['What context should the prompt use?', oneField('context', 'string')],
    ]);
  });

  test('a client without sampling/elicitation/roots: the tools report an error and ask nothing', async () => {
    const bare = await connect({ sampling: false, elicitation: false, roots: false });
    try {
      const cases = [
        ['test_sampling', { prompt: 'hi' }, 'sampling'],
        ['test_elicitation', { message: 'hi' }, 'elicitation'],
        ['test_elicitation_sep1330_enums', {}, 'elicitation'],
        ['test_input_required_result_list_roots', {}, 'roots'],
        ['test_missing_capability', {}, 'sampling'],
      ];
      for (const [name, args, cap] of cases) {
        const r = await bare.client.callTool({ name, arguments: args });
        assert.match(errorText(r).toLowerCase(), new RegExp(cap), name);
      }
      assert.equal(
        textOf(await bare.client.callTool({ name: 'test_input_required_result_capabilities', arguments: {} })),
        'No supported capabilities declared',
      );
      assert.deepEqual(bare.serverRequests(), []);
      assert.deepEqual(bare.sdkErrors, []);
    } finally {
      await bare.close();
    }
  });

  // ---- list_changed ------------------------------------------------------------------------------

  test('test_trigger_tool_change / test_trigger_prompt_change notify the session', async () => {
    const before = c.notifications.length;
    assert.equal(textOf(await c.client.callTool({ name: 'test_trigger_tool_change', arguments: {} })), 'Tool list change triggered');
    assert.equal(textOf(await c.client.callTool({ name: 'test_trigger_prompt_change', arguments: {} })), 'Prompt list change triggered');
    const listChanged = () => c.notifications.slice(before).filter((n) => n.method.endsWith('/list_changed')).map((n) => n.method);
    assert.ok(await waitFor(() => listChanged().length >= 2, 2000), JSON.stringify(listChanged()));
    assert.deepEqual(listChanged(), ['notifications/tools/list_changed', 'notifications/prompts/list_changed']);
    // The triggers only notify: the lists themselves are unchanged.
    assertToolNames((await c.client.listTools()).tools.map((t) => t.name));
  });

  test('transport: every server message is JSON-RPC 2.0, server requests are input requests, no SDK errors', () => {
    for (const { message } of c.received) assert.equal(message.jsonrpc, '2.0');
    for (const m of c.serverRequests()) {
      assert.ok(['sampling/createMessage', 'elicitation/create', 'roots/list', 'ping'].includes(m.method), m.method);
    }
    const unexpected = c.sdkErrors.filter((e) => !/progress notification for an unknown token/.test(e));
    assert.deepEqual(unexpected, []);
  });

  // A name in MCP_DESELECT that matches no test is a typo or a renamed test: fail loudly.
  const unknown = [...DESELECT].filter((n) => !deselected.has(n));
  if (unknown.length) throw new Error(`MCP_DESELECT names no test: ${unknown.join('; ')}`);
});
