// End-to-end: the embassy firmware runs in QEMU (mps2-an386) as a stdio MCP server, launched
// the embedded way (`cargo run --release` in examples/firmware-embassy, whose
// .cargo/config.toml makes QEMU the runner and routes the semihosting defmt log to
// $MCP_DEFMT_LOG).
//
// 1. Initialize era: the official TypeScript SDK 1.x client (@modelcontextprotocol/sdk).
// 2. 2026-07-28 (stateless) era: the official 2.x client (@modelcontextprotocol/client) over
//    its own stdio transport, pinned to 2026-07-28 (no initialize: every request carries its
//    revision and capabilities in _meta).
//
// In both: the seven tools are listed (the six shared with examples/firmware plus
// `countdown`) and every schema compiles with Ajv (JSON Schema 2020-12); each of the six is
// called, arguments are checked against the input schema with Ajv, and refused arguments come
// back as `isError` results; `countdown` reports progress on every step and is answered
// later, and a second one is cancelled (AbortSignal -> notifications/cancelled) while the
// server keeps serving; the sensor resource is listed and read; `prompts/get` renders the
// prompt with its argument. In the initialize era the client subscribes to
// sensor://temperature with resources/subscribe, in the 2026-07-28 era on a
// subscriptions/listen stream (`client.listen({resourceSubscriptions})`: the acknowledgement
// names the URI, the updates carry the stream's subscriptionId, and none follow the stream's
// cancellation), and receives notifications/resources/updated. After each session the
// defmt log is decoded with defmt-print and must name the requests served.
// 3. Raw JSON-RPC through examples/firmware/qemu-run: both eras on one connection, nothing
//    but JSON-RPC lines on stdout, exit 0 on stdin EOF.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";

import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import Ajv2020 from "ajv/dist/2020.js";

const here = dirname(fileURLToPath(import.meta.url));
const firmwareDir = resolve(here, "..");
const elf = resolve(process.env.CARGO_TARGET_DIR ?? resolve(firmwareDir, "target"), "thumbv7em-none-eabihf/release/mcp-firmware-embassy");
const TIMEOUT = 30_000;
const MODERN = "2026-07-28";
const SENSOR = "sensor://temperature";
const SIX = ["calculate", "roll_dice", "tell_fortune", "read_temperature", "set_led", "uptime_ms"];
const logDir = mkdtempSync(join(tmpdir(), "mcp-embassy-defmt-"));
const counts = { sessions: 0, toolCalls: 0, argumentErrors: 0, progress: 0, cancelled: 0, updated: 0, prompts: 0, logLines: 0 };
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
const opts = { timeout: TIMEOUT };

/** `tools/call`: the 1.x client takes (params, resultSchema, options), 2.x (params, options). */
function callTool(client, params, options = opts) {
  return client instanceof ClientV1 ? client.callTool(params, undefined, options) : client.callTool(params, options);
}

function launch(Transport, logFile) {
  return new Transport({
    command: "cargo",
    args: ["run", "--release", "--quiet"],
    cwd: firmwareDir,
    env: { ...process.env, CARGO_TERM_QUIET: "true", MCP_DEFMT_LOG: logFile },
    stderr: "inherit",
  });
}

/** Every tool, over as many pages as the server sends. */
async function listAll(client) {
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined, opts);
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

/** The tool list: names, schemas (Ajv 2020-12), the countdown's declared arguments. */
function checkTools(tools) {
  assert.deepEqual(tools.map((t) => t.name), [...SIX, "countdown"]);
  const ajv = new Ajv2020({ strict: false });
  const validators = {};
  for (const tool of tools) {
    assert.equal(tool.inputSchema.type, "object", tool.name);
    validators[tool.name] = ajv.compile(tool.inputSchema);
    if (tool.outputSchema) ajv.compile(tool.outputSchema);
  }
  const countdown = tools.at(-1);
  assert.deepEqual(countdown.inputSchema.required, ["ms"]);
  assert.equal(countdown.inputSchema.properties.steps.default, 5);
  assert.equal(countdown.annotations.readOnlyHint, true);
  return validators;
}

/** Calls each of the six tools, with arguments the schema accepts and ones it refuses. */
async function callSix(client, validators) {
  const call = async (name, args, valid = true) => {
    assert.equal(validators[name](args), valid, `${name} ${JSON.stringify(args)} against its schema`);
    counts.toolCalls += 1;
    return callTool(client, { name, arguments: args });
  };
  let r = await call("calculate", { operation: "multiply", a: 6, b: 7 });
  assert.deepEqual(r.structuredContent, { result: 42 });
  r = await call("roll_dice", { notation: "3d6+1" });
  assert.equal(r.structuredContent.rolls.length, 3);
  assert.equal(r.structuredContent.total, r.structuredContent.rolls.reduce((a, b) => a + b, 0) + 1);
  r = await call("tell_fortune", { category: "wealth" });
  assert.equal(r.content[0].type, "text");
  r = await call("read_temperature", { unit: "celsius" });
  assert.equal(r.structuredContent.unit, "celsius");
  assert.ok(r.structuredContent.temperature >= 19.5 && r.structuredContent.temperature <= 24.5);
  r = await call("set_led", { led: 1, on: true });
  assert.deepEqual(r.structuredContent.leds[1], true);
  r = await call("uptime_ms", {});
  assert.ok(Number.isInteger(r.structuredContent.uptime_ms) && r.structuredContent.uptime_ms > 0);

  // Refused arguments: `isError` results naming the argument (not JSON-RPC errors).
  for (const [name, args, message] of [
    ["calculate", { operation: "power", a: 1, b: 2 }, 'argument `operation`: must be one of "add", "subtract", "multiply", "divide"'],
    ["roll_dice", { notation: 6 }, "argument `notation`: must be a string"],
    ["tell_fortune", { category: 3 }, "argument `category`: must be a string"],
    ["read_temperature", { unit: "kelvin" }, null],
    ["set_led", { led: 2, on: true }, "argument `led`: must be 0 or 1"],
    ["uptime_ms", { verbose: true }, 'arguments: unknown member "verbose"'],
    ["countdown", { ms: 0 }, "argument `ms`: is out of range"],
    ["countdown", { ms: 10, stepz: 2 }, 'arguments: unknown member "stepz"'],
    ["countdown", {}, "argument `ms`: is required"],
  ]) {
    r = await call(name, args, false);
    assert.equal(r.isError, true, `${name} ${JSON.stringify(args)}`);
    const text = r.content[0].text;
    assert.ok(text.startsWith(`Invalid arguments for tool ${name}: `), text);
    if (message) assert.equal(text, `Invalid arguments for tool ${name}: ${message}`);
    counts.argumentErrors += 1;
  }
}

/** `countdown`: progress on every step then the result; a second one cancelled. */
async function countdown(client, label) {
  const seen = [];
  const t0 = performance.now();
  const r = await callTool(client, { name: "countdown", arguments: { ms: 600, steps: 3 } }, {
    ...opts,
    onprogress: (p) => seen.push([p.progress, p.total]),
  });
  const took = performance.now() - t0;
  assert.equal(r.content[0].text, "waited 600 ms in 3 steps");
  // The server sends progress 1/3, 2/3, 3/3, then the result right after the last: the SDK
  // may settle the call before it dispatches that last notification (its handlers run a
  // microtask later), so 3/3 is not always seen.
  assert.deepEqual(seen.slice(0, 2), [[1, 3], [2, 3]]);
  assert.ok(seen.length <= 3 && (seen.length < 3 || seen[2][0] === 3), JSON.stringify(seen));
  assert.ok(took >= 550, `${label}: countdown of 600 ms took ${took.toFixed(0)} ms`);
  counts.progress += seen.length;
  counts.toolCalls += 1;

  // Cancelled after its first step: the SDK sends notifications/cancelled and rejects.
  const controller = new AbortController();
  const steps = [];
  const cancelled = callTool(client, { name: "countdown", arguments: { ms: 3000, steps: 10 } }, {
    ...opts,
    signal: controller.signal,
    onprogress: (p) => {
      steps.push(p.progress);
      controller.abort("enough");
    },
  });
  await assert.rejects(cancelled);
  assert.deepEqual(steps, [1]);
  counts.cancelled += 1;
  counts.toolCalls += 1;
  // The server keeps serving, and the cancelled countdown sends nothing more (checked in the
  // defmt log: "countdown cancelled", and only one "countdown finished").
  await sleep(700);
  const again = await callTool(client, { name: "countdown", arguments: { ms: 50, steps: 1 } });
  assert.equal(again.content[0].text, "waited 50 ms in 1 steps");
  counts.toolCalls += 1;
}

/** The sensor resource and the prompt. */
async function resourceAndPrompt(client) {
  const { resources } = await client.listResources(undefined, opts);
  assert.deepEqual(resources.map((r) => r.uri), [SENSOR]);
  const read = await client.readResource({ uri: SENSOR }, opts);
  const celsius = Number(read.contents[0].text);
  assert.ok(celsius >= 19.5 && celsius <= 24.5, read.contents[0].text);
  const { prompts } = await client.listPrompts(undefined, opts);
  assert.deepEqual(prompts.map((p) => [p.name, p.arguments.map((a) => [a.name, a.required])]), [["temperature_report", [["unit", true]]]]);
  const prompt = await client.getPrompt({ name: "temperature_report", arguments: { unit: "fahrenheit" } }, opts);
  assert.equal(prompt.messages[0].role, "user");
  assert.match(prompt.messages[0].content.text, /sensor:\/\/temperature\) reads \d+(\.\d)? F\./);
  await assert.rejects(client.getPrompt({ name: "temperature_report", arguments: { unit: "kelvin" } }, opts));
  counts.prompts += 2;
}

/** Decodes a session's defmt log and checks that it names what was served. */
function checkLog(logFile, expected) {
  const decoded = spawnSync("defmt-print", ["-e", elf], { input: readFileSync(logFile), encoding: "utf8" });
  assert.equal(decoded.status, 0, decoded.stderr);
  const lines = decoded.stdout.split("\n").filter(Boolean);
  for (const want of expected) {
    assert.ok(lines.some((l) => l.includes(want)), `the defmt log names "${want}":\n${decoded.stdout}`);
  }
  assert.equal(lines.filter((l) => l.includes("countdown finished")).length, 2, decoded.stdout);
  counts.logLines += lines.length;
  return lines;
}

const COMMON_LOG = [
  "serving MCP on UART0",
  "request: tools/list",
  "request: tools/call",
  "tool: calculate", "tool: roll_dice", "tool: tell_fortune", "tool: read_temperature", "tool: set_led", "tool: uptime_ms",
  "tool: countdown", "countdown started: 600 ms in 3 steps", "countdown cancelled",
  "request: notifications/cancelled",
  "request: resources/list", "request: resources/read", "resource: read sensor://temperature",
  "request: prompts/list", "request: prompts/get", "prompt: temperature_report",
];

// ---- 1. initialize era: SDK 1.x ------------------------------------------------------------
{
  const log = join(logDir, "legacy.defmt");
  const client = new ClientV1({ name: "mcp-rs-embassy-interop", version: "1.0.0" });
  await client.connect(launch(StdioV1, log), opts);
  counts.sessions += 1;
  assert.equal(client.getServerVersion().name, "mcp-rs-firmware-embassy");
  const caps = client.getServerCapabilities();
  assert.equal(caps.resources.subscribe, true);
  assert.ok(caps.prompts && caps.tools);

  const validators = checkTools(await listAll(client));
  await callSix(client, validators);
  await countdown(client, "initialize era");
  await resourceAndPrompt(client);

  // Subscribe: the sampler reads every 500 ms and the noise alone changes most readings.
  const updates = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params.uri));
  await client.subscribeResource({ uri: SENSOR }, opts);
  for (let i = 0; i < 100 && updates.length < 2; i++) await sleep(100);
  assert.ok(updates.length >= 2, `notifications/resources/updated received: ${updates.length}`);
  assert.ok(updates.every((u) => u === SENSOR));
  await client.unsubscribeResource({ uri: SENSOR }, opts);
  await sleep(200); // an update already on the wire may still arrive
  const after = updates.length;
  await sleep(1600);
  assert.equal(updates.length, after, "no updates after unsubscribe");
  counts.updated += updates.length;
  await client.ping(opts);
  await client.close();
  await sleep(500); // QEMU stopped, its log file closed
  checkLog(log, [...COMMON_LOG, "request: initialize", "request: notifications/initialized", "session event initialized", "request: resources/subscribe", "resource: subscribed sensor://temperature", "notify: resources/updated sensor://temperature", "request: resources/unsubscribe", "request: ping"]);
  console.log(`ok: initialize era (SDK 1.32.2): 7 tools, ${updates.length} resources/updated, progress, cancellation, prompt, defmt log`);
}

// ---- 2. 2026-07-28 era: SDK 2.x over stdio --------------------------------------------------
{
  const log = join(logDir, "modern.defmt");
  const client = new ClientV2({ name: "mcp-rs-embassy-interop", version: "1.0.0" }, { capabilities: {}, versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(launch(StdioV2, log), opts);
  counts.sessions += 1;
  assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
  assert.equal(client.getServerVersion().name, "mcp-rs-firmware-embassy");
  const validators = checkTools(await listAll(client));
  await callSix(client, validators);
  await countdown(client, "2026-07-28");
  await resourceAndPrompt(client);
  // resources/subscribe belongs to the handshake era: the SDK refuses it itself in this era.
  await assert.rejects(client.subscribeResource({ uri: SENSOR }, opts));
  // 2026-07-28 subscribes on a subscriptions/listen stream: the acknowledgement names the
  // URIs the server honours (not the unknown one), and every update carries the stream's
  // subscription id.
  const SUB = "io.modelcontextprotocol/subscriptionId";
  const streamed = [];
  client.setNotificationHandler("notifications/resources/updated", (n) => streamed.push(n.params));
  const subscription = await client.listen({ resourceSubscriptions: [SENSOR, "sensor://nope"] }, opts);
  assert.deepEqual(subscription.honoredFilter, { resourceSubscriptions: [SENSOR] });
  for (let i = 0; i < 100 && streamed.length < 2; i++) await sleep(100);
  assert.ok(streamed.length >= 2, `notifications/resources/updated on the stream: ${streamed.length}`);
  const subscriptionId = streamed[0]._meta?.[SUB];
  assert.equal(typeof subscriptionId, "string", JSON.stringify(streamed[0]));
  for (const p of streamed) assert.deepEqual(p, { uri: SENSOR, _meta: { [SUB]: subscriptionId } });
  // Cancelled (notifications/cancelled naming the listen request): nothing more arrives.
  await subscription.close();
  assert.equal(await subscription.closed, "local");
  await client.listResources(undefined, opts); // a round trip: the cancellation was read
  await sleep(200); // an update already on the wire may still arrive
  const afterClose = streamed.length;
  await sleep(1600);
  assert.equal(streamed.length, afterClose, "no updates after the stream was cancelled");
  counts.updated += streamed.length;
  await client.close();
  await sleep(500);
  // Pinned to 2026-07-28, the 2.x client sends no server/discover (nor initialize): every
  // request carries its revision in _meta.
  const lines = checkLog(log, [...COMMON_LOG, "request: subscriptions/listen", "notify: resources/updated sensor://temperature"]);
  assert.ok(!lines.some((l) => l.includes("request: initialize")), "no initialize in the 2026-07-28 era");
  console.log(`ok: 2026-07-28 era (client 2.4.0, stdio): 7 tools, ${streamed.length} resources/updated on a listen stream, progress, cancellation, prompt, defmt log`);
}

// ---- 3. Both eras on one connection, raw, through the QEMU wrapper ----------------------------
// Every stdout line must be a JSON-RPC message (the log goes to the file, never to the UART),
// and the wrapper must exit 0 on stdin EOF.
{
  const log = join(logDir, "raw.defmt");
  const child = spawn(resolve(firmwareDir, "../firmware/qemu-run"), [elf], {
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, QEMU_EXTRA_ARGS: `-semihosting-config enable=on,target=native,chardev=defmt -chardev file,id=defmt,path=${log}` },
  });
  let buffered = "";
  const frames = [];
  const waiters = [];
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk) => {
    buffered += chunk;
    let i;
    while ((i = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, i);
      buffered = buffered.slice(i + 1);
      frames.push(JSON.parse(line)); // throws on anything but JSON
      for (const w of waiters.splice(0)) w();
    }
  });
  const exited = new Promise((ok) => child.on("exit", (code, signal) => ok({ code, signal })));
  const next = async (pred, what) => {
    const deadline = Date.now() + TIMEOUT;
    for (;;) {
      const i = frames.findIndex(pred);
      if (i >= 0) return frames.splice(i, 1)[0];
      assert.ok(Date.now() < deadline, `no ${what} in ${TIMEOUT} ms`);
      await Promise.race([new Promise((ok) => waiters.push(ok)), sleep(200)]);
    }
  };
  const send = (msg) => child.stdin.write(JSON.stringify({ jsonrpc: "2.0", ...msg }) + "\n");
  const reply = (id) => next((f) => f.id === id, `reply ${id}`);
  const modern = { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} };

  send({ id: 1, method: "initialize", params: { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
  assert.equal((await reply(1)).result.protocolVersion, "2024-11-05");
  send({ method: "notifications/initialized" });
  // 2026-07-28 discover declares resources.subscribe: listen streams honour
  // resourceSubscriptions for the subscribable sensor.
  send({ id: "d", method: "server/discover", params: { _meta: modern } });
  const discovered = (await reply("d")).result;
  assert.ok(discovered.supportedVersions.includes(MODERN), JSON.stringify(discovered));
  assert.deepEqual(discovered.capabilities.resources, { subscribe: true }, JSON.stringify(discovered));
  // A 2026-07-28 request on the same connection: self-contained, answered in its own era.
  send({ id: 2, method: "tools/call", params: { name: "calculate", arguments: { operation: "add", a: 2, b: 40 }, _meta: modern } });
  let r = await reply(2);
  assert.deepEqual(r.result.structuredContent, { result: 42 });
  assert.equal(r.result.resultType, "complete");
  // Back in the initialize era: subscribe, and a countdown without progressToken (no progress).
  send({ id: 3, method: "resources/subscribe", params: { uri: SENSOR } });
  assert.deepEqual((await reply(3)).result, {});
  send({ id: 4, method: "tools/call", params: { name: "countdown", arguments: { ms: 300, steps: 3 } } });
  assert.equal((await reply(4)).result.content[0].text, "waited 300 ms in 3 steps");
  const updated = await next((f) => f.method === "notifications/resources/updated", "resources/updated");
  assert.deepEqual(updated.params, { uri: SENSOR });
  counts.updated += 1;
  send({ id: 5, method: "resources/unsubscribe", params: { uri: SENSOR } });
  await reply(5);
  child.stdin.write("{garbage\n");
  assert.equal((await next((f) => f.error?.code === -32700, "parse error")).error.code, -32700);
  assert.ok(!frames.some((f) => f.method === "notifications/progress"), "no progress without a progressToken");
  child.stdin.end();
  const { code, signal } = await exited;
  assert.equal(code, 0, `wrapper exit code ${code} signal ${signal}`);
  counts.sessions += 1;
  const decoded = spawnSync("defmt-print", ["-e", elf], { input: readFileSync(log), encoding: "utf8" }).stdout;
  for (const want of ["request: initialize", "request: tools/call", "tool: calculate", "request: resources/subscribe", "countdown finished", "request: resources/unsubscribe"]) {
    assert.ok(decoded.includes(want), `the defmt log names "${want}":\n${decoded}`);
  }
  console.log("ok: both eras on one raw connection; stdout carries JSON-RPC only; the wrapper exits 0 on EOF");
}

rmSync(logDir, { recursive: true, force: true });
console.log(`summary: ${Object.entries(counts).map(([k, v]) => `${k}=${v}`).join(" ")}`);
