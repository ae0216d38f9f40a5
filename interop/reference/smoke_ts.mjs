// Smoke check of a reference server (interop/REFERENCE.md) with the official TypeScript SDK clients.
//
//   node interop/reference/smoke_ts.mjs ERA TRANSPORT -- SERVER COMMAND...
//
// ERA `handshake` uses the 1.x client (@modelcontextprotocol/sdk: initialize, 2025-11-25); ERA
// `modern` uses the 2.x client (@modelcontextprotocol/client, versionNegotiation pinned to
// 2026-07-28: server/discover, stateless requests, input_required driven by the client itself).
// TRANSPORT `stdio` runs the command with `stdio` appended; `http` runs it with `http` appended
// and reads the URL from its single `listening on URL` line. Prints one line per check and a
// closing `N passed, N failed` line; exits non-zero on a failure. The SDKs come from
// interop/ts/node_modules (`cd interop/ts && npm install --no-package-lock`). Not part of any
// suite: a tool for whoever changes a reference server.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const requireFromTs = createRequire(path.join(here, '../ts/package.json'));
const load = (specifier) => import(pathToFileURL(requireFromTs.resolve(specifier)).href);

const [era, transportKind, dashes, ...command] = process.argv.slice(2);
assert.equal(dashes, '--', 'usage: smoke_ts.mjs ERA TRANSPORT -- COMMAND...');
const MODERN = era === 'modern';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function waitFor(cond, ms = 3000) {
  const end = Date.now() + ms;
  while (Date.now() < end && !cond()) await sleep(10);
  return cond();
}

const ROOTS = [{ uri: 'file:///tmp/one', name: 'one' }, { uri: 'file:///tmp/two' }];
const PERSON_SCHEMA = {
  type: 'object',
  properties: { name: { type: 'string' }, age: { type: 'integer', default: 42 } },
  required: ['name'],
};
const TOOLS = ['add', 'add_tool', 'ask_llm', 'ask_user', 'echo', 'fail', 'log', 'roots', 'slow', 'touch'];

let sdk;
let stdioSdk;
let httpSdk;
if (MODERN) {
  sdk = await load('@modelcontextprotocol/client');
  stdioSdk = await load('@modelcontextprotocol/client/stdio');
  httpSdk = sdk;
} else {
  sdk = { ...(await load('@modelcontextprotocol/sdk/client/index.js')), ...(await load('@modelcontextprotocol/sdk/types.js')) };
  stdioSdk = await load('@modelcontextprotocol/sdk/client/stdio.js');
  httpSdk = await load('@modelcontextprotocol/sdk/client/streamableHttp.js');
}

// In the 1.x client handlers are keyed by zod schema, in 2.x by method name.
const key = (method, schemaName) => (MODERN ? method : sdk[schemaName]);

const asked = [];
const notes = [];
let elicitAnswer = { action: 'accept', content: { name: 'Ada', age: 36 } };

const client = new sdk.Client(
  { name: 'reference-smoke-ts', version: '0.0.0' },
  {
    capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } },
    ...(MODERN && { versionNegotiation: { mode: { pin: '2026-07-28' } } }),
  },
);
client.setRequestHandler(key('sampling/createMessage', 'CreateMessageRequestSchema'), async (request) => {
  asked.push(['sampling', request.params]);
  return {
    role: 'assistant',
    content: { type: 'text', text: `answer to ${request.params.messages[0].content.text}` },
    model: 'm',
    stopReason: 'endTurn',
  };
});
client.setRequestHandler(key('elicitation/create', 'ElicitRequestSchema'), async (request) => {
  asked.push(['elicitation', request.params]);
  return elicitAnswer;
});
client.setRequestHandler(key('roots/list', 'ListRootsRequestSchema'), async () => {
  asked.push(['roots']);
  return { roots: ROOTS };
});
for (const [method, schema] of [
  ['notifications/message', 'LoggingMessageNotificationSchema'],
  ['notifications/tools/list_changed', 'ToolListChangedNotificationSchema'],
  ['notifications/resources/updated', 'ResourceUpdatedNotificationSchema'],
]) {
  client.setNotificationHandler(key(method, schema), (n) => notes.push(n));
}
const seen = (method) => notes.filter((n) => n.method === method);

let child;
let transport;
if (transportKind === 'stdio') {
  transport = new stdioSdk.StdioClientTransport({ command: command[0], args: [...command.slice(1), 'stdio'], stderr: 'inherit' });
} else {
  child = spawn(command[0], [...command.slice(1), 'http'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.split('\n')[0]);
    });
    child.on('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
  assert.match(line, /^listening on http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  transport = new httpSdk.StreamableHTTPClientTransport(new URL(line.split(' ').pop()));
}

const LOG_META = MODERN ? { _meta: { [sdk.LOG_LEVEL_META_KEY]: 'info' } } : {};
const call = (name, args = {}, options) => client.callTool({ name, arguments: args, ...LOG_META }, undefined, options);
const call2 = (name, args = {}, options) =>
  MODERN ? client.callTool({ name, arguments: args, ...LOG_META }, options) : call(name, args, options);
const textOf = (r) => {
  assert.equal(r.content.length, 1, JSON.stringify(r));
  assert.equal(r.content[0].type, 'text');
  return r.content[0].text;
};

let passed = 0;
let failed = 0;
async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok   ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}\n${e?.stack ?? e}`);
  }
}

try {
  await client.connect(transport);
  console.log(`server ${JSON.stringify(client.getServerVersion())} caps ${JSON.stringify(client.getServerCapabilities())}`);
  if (MODERN) assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');

  await check('lists', async () => {
    const tools = Object.fromEntries((await client.listTools()).tools.map((t) => [t.name, t]));
    assert.deepEqual(Object.keys(tools).sort(), TOOLS);
    const { type, properties, required } = tools.add.outputSchema;
    assert.deepEqual({ type, properties, required }, { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] });
    assert.deepEqual(tools.echo.inputSchema.required, ['text']);
    assert.equal(tools.slow.inputSchema.properties.steps.type, 'integer');
    const resources = (await client.listResources()).resources.map((r) => [r.uri, r.mimeType]).sort();
    assert.deepEqual(resources, [['ref://static/blob', 'application/octet-stream'], ['ref://static/text', 'text/plain']]);
    assert.deepEqual((await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate), ['ref://items/{id}']);
    const prompts = Object.fromEntries((await client.listPrompts()).prompts.map((p) => [p.name, p]));
    assert.deepEqual(Object.keys(prompts).sort(), ['greet', 'plain']);
    assert.deepEqual(prompts.greet.arguments.map((a) => [a.name, a.required]), [['name', true]]);
    assert.ok(!prompts.plain.arguments?.length);
  });

  await check('echo', async () => assert.equal(textOf(await call('echo', { text: 'hi' })), 'echo: hi'));

  await check('add', async () => {
    const r = await call('add', { a: 2, b: 3.5 });
    assert.deepEqual(r.structuredContent, { sum: 5.5 });
    assert.deepEqual(JSON.parse(textOf(r)), { sum: 5.5 });
    assert.equal(textOf(await call('add', { a: 1, b: 2 })), '{"sum":3}');
  });

  await check('slow', async () => {
    const updates = [];
    const r = await call2('slow', { steps: 3 }, { onprogress: (p) => updates.push([p.progress, p.total]) });
    assert.equal(textOf(r), 'done 3');
    assert.deepEqual(updates, [[1, 3], [2, 3], [3, 3]]);
    assert.equal(textOf(await call('slow', { steps: 2 })), 'done 2');
  });

  await check('log', async () => {
    if (!MODERN) await client.setLoggingLevel('debug');
    notes.length = 0;
    assert.equal(textOf(await call('log', { message: 'hello log' })), 'logged');
    assert.ok(await waitFor(() => seen('notifications/message').length === 1));
    const [m] = seen('notifications/message');
    assert.deepEqual([m.params.level, m.params.data], ['info', 'hello log']);
    if (MODERN) {
      // Without the _meta log level the server sends nothing.
      notes.length = 0;
      assert.equal(textOf(await client.callTool({ name: 'log', arguments: { message: 'quiet' } })), 'logged');
    } else {
      await client.setLoggingLevel('error');
      notes.length = 0;
      assert.equal(textOf(await call('log', { message: 'quiet' })), 'logged');
    }
    await sleep(300);
    assert.deepEqual(seen('notifications/message'), []);
    if (!MODERN) await client.setLoggingLevel('info');
  });

  await check('ask_llm', async () => {
    asked.length = 0;
    assert.equal(textOf(await call('ask_llm', { prompt: 'why?' })), 'sampled: answer to why?');
    const [[kind, params]] = asked;
    assert.equal(kind, 'sampling');
    assert.equal(params.maxTokens, 50);
    assert.deepEqual(params.messages.map((m) => [m.role, m.content.text]), [['user', 'why?']]);
  });

  await check('ask_user', async () => {
    asked.length = 0;
    elicitAnswer = { action: 'accept', content: { name: 'Ada', age: 36 } };
    assert.equal(textOf(await call('ask_user', { question: 'who?' })), 'accept {"name":"Ada","age":36}');
    const [[kind, params]] = asked;
    assert.equal(kind, 'elicitation');
    assert.equal(params.message, 'who?');
    assert.deepEqual(params.requestedSchema, PERSON_SCHEMA);
    assert.ok(params.mode === undefined || params.mode === 'form', params.mode);
    // Content is echoed as the client sent it: the schema's default age is not filled in.
    elicitAnswer = { action: 'accept', content: { name: 'Bob' } };
    assert.equal(textOf(await call('ask_user', { question: 'who?' })), 'accept {"name":"Bob"}');
    elicitAnswer = { action: 'decline' };
    assert.equal(textOf(await call('ask_user', { question: 'who?' })), 'decline null');
    elicitAnswer = { action: 'cancel' };
    assert.equal(textOf(await call('ask_user', { question: 'who?' })), 'cancel null');
  });

  await check('roots', async () => assert.equal(textOf(await call('roots')), 'roots: file:///tmp/one,file:///tmp/two'));

  await check('fail', async () => {
    const r = await call('fail');
    assert.equal(r.isError, true);
    assert.equal(textOf(r), 'failed on purpose');
  });

  await check('add_tool', async () => {
    notes.length = 0;
    const sub = MODERN ? await client.listen({ toolsListChanged: true }) : undefined;
    try {
      assert.equal(textOf(await call('add_tool')), 'added');
      assert.ok(await waitFor(() => seen('notifications/tools/list_changed').length >= 1), 'tools/list_changed');
    } finally {
      await sub?.close();
    }
    const listed = (await client.listTools(undefined, MODERN ? { cacheMode: 'refresh' } : undefined)).tools.map((t) => t.name);
    assert.ok(listed.includes('extra'), listed);
    assert.equal(textOf(await call('extra')), 'extra');
  });

  await check('touch', async () => {
    const uri = 'ref://static/text';
    notes.length = 0;
    if (MODERN) {
      const sub = await client.listen({ resourceSubscriptions: [uri] });
      try {
        assert.deepEqual(sub.honoredFilter.resourceSubscriptions, [uri]);
        assert.equal(textOf(await call('touch', { uri })), 'touched');
        assert.ok(await waitFor(() => seen('notifications/resources/updated').length === 1), 'resources/updated');
      } finally {
        await sub.close();
      }
    } else {
      assert.equal(textOf(await call('touch', { uri })), 'touched');
      await sleep(300);
      assert.deepEqual(seen('notifications/resources/updated'), []);
      await client.subscribeResource({ uri });
      assert.equal(textOf(await call('touch', { uri })), 'touched');
      assert.ok(await waitFor(() => seen('notifications/resources/updated').length === 1), 'resources/updated');
      await client.unsubscribeResource({ uri });
      notes.length = 0;
      assert.equal(textOf(await call('touch', { uri })), 'touched');
      await sleep(300);
      assert.deepEqual(seen('notifications/resources/updated'), []);
    }
    assert.equal(seen('notifications/resources/updated')[0]?.params.uri ?? uri, uri);
  });

  await check('resources', async () => {
    let r = await client.readResource({ uri: 'ref://static/text' });
    assert.deepEqual(r.contents.map((c) => [c.uri, c.mimeType, c.text]), [['ref://static/text', 'text/plain', 'static text']]);
    r = await client.readResource({ uri: 'ref://static/blob' });
    assert.equal(r.contents[0].mimeType, 'application/octet-stream');
    assert.deepEqual([...Buffer.from(r.contents[0].blob, 'base64')], [0, 1, 2, 3]);
    r = await client.readResource({ uri: 'ref://items/7' });
    assert.deepEqual(r.contents.map((c) => [c.uri, c.text]), [['ref://items/7', 'item 7']]);
  });

  await check('prompts', async () => {
    let r = await client.getPrompt({ name: 'greet', arguments: { name: 'Ada' } });
    assert.deepEqual(r.messages.map((m) => [m.role, m.content.text]), [['user', 'Hello, Ada!']]);
    r = await client.getPrompt({ name: 'plain' });
    assert.deepEqual(r.messages.map((m) => [m.role, m.content.text]), [['user', 'plain prompt']]);
  });

  await check('complete', async () => {
    const greet = { type: 'ref/prompt', name: 'greet' };
    let r = await client.complete({ ref: greet, argument: { name: 'name', value: 'al' } });
    assert.deepEqual(r.completion.values, ['alice', 'albert']);
    r = await client.complete({ ref: greet, argument: { name: 'name', value: '' } });
    assert.deepEqual(r.completion.values, ['alice', 'albert', 'bob']);
    r = await client.complete({ ref: { type: 'ref/resource', uri: 'ref://items/{id}' }, argument: { name: 'id', value: '2' } });
    assert.deepEqual(r.completion.values, ['2']);
  });
} finally {
  await client.close().catch(() => {});
  child?.kill('SIGTERM');
}
console.log(`smoke ${era} ${transportKind}: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
