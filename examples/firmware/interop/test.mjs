// End-to-end: the firmware runs in QEMU as a stdio MCP server, on the board named by
// $FIRMWARE_BOARD: `mps2-an386` (the default), `microbit` or `riscv` (QEMU `sifive_e`).
//
// 1. The official TypeScript SDK client launches it the embedded way (`cargo run --release`
//    in examples/firmware, whose .cargo/config.toml makes QEMU the runner; `--target` for
//    the boards other than mps2-an386), lists the tools and calls each one (legacy era, the
//    SDK's newest revision).
// 2. The SDK client launches it from the repository root with the documented command
//    (`cargo --config examples/firmware/.cargo/config.toml run --release --manifest-path ...`).
// 3. The official 2.x client (@modelcontextprotocol/client) over its own stdio transport,
//    pinned to 2026-07-28 (stateless era: no initialize, every request carries its revision
//    and capabilities in _meta): the same tools/list and every tool call, refused arguments
//    as isError results.
// 4. Raw 2026-07-28 requests through the QEMU wrapper (what an SDK does not send: integers
//    spelled 1.0 and 0e5, a garbled and an oversized line), which must exit 0 on stdin EOF.
//
// Every inputSchema and outputSchema is compiled with Ajv (JSON Schema 2020-12), and the SDKs
// check every structuredContent against its tool's outputSchema.
//
// Prints round-trip times. Input through QEMU's emulated UART is slow (~35 us a byte,
// ~1 s until the first byte is read), so timeouts are generous.
import { spawn } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import Ajv2020 from "ajv/dist/2020.js";

const here = dirname(fileURLToPath(import.meta.url));
const firmwareDir = resolve(here, "..");
const repoRoot = resolve(firmwareDir, "../..");
// Each board: its build target (which chooses the board, see src/board/) and QEMU machine.
const BOARDS = {
  "mps2-an386": { target: "thumbv7em-none-eabihf", machine: "mps2-an386", title: "mcp-rs on a Cortex-M4F" },
  microbit: { target: "thumbv6m-none-eabi", machine: "microbit", title: "mcp-rs on a Cortex-M0" },
  riscv: { target: "riscv32imac-unknown-none-elf", machine: "sifive_e", title: "mcp-rs on a RISC-V RV32IMAC" },
};
const boardName = process.env.FIRMWARE_BOARD || "mps2-an386";
const board = BOARDS[boardName];
if (!board) throw new Error(`FIRMWARE_BOARD=${boardName}: not one of ${Object.keys(BOARDS).join(", ")}`);
// The default target (.cargo/config.toml) is mps2-an386's: it is launched without --target.
const targetArgs = boardName === "mps2-an386" ? [] : ["--target", board.target];
const elf = resolve(process.env.CARGO_TARGET_DIR ?? resolve(firmwareDir, "target"), `${board.target}/release/mcp-firmware`);
const TIMEOUT = 30_000;
const MODERN = "2026-07-28";

const times = {};
function record(name, ms) {
  (times[name] ??= []).push(ms);
}
async function timed(name, promise) {
  const t0 = performance.now();
  const value = await promise;
  record(name, performance.now() - t0);
  return value;
}
const structured = (r) => r.structuredContent;

async function sdkSession(label, transport) {
  const client = new Client({ name: "mcp-rs-firmware-interop", version: "1.0.0" });
  await timed(`${label}: connect (spawn + QEMU boot + initialize)`, client.connect(transport, { timeout: TIMEOUT }));
  const server = client.getServerVersion();
  assert.equal(server.name, "mcp-rs-firmware");
  assert.equal(server.title, board.title);
  return client;
}

// Every schema compiles as JSON Schema 2020-12, and the probe-style promises hold: each
// tool's required properties and enums are as they were before the firmware moved onto
// mcp-macros (roll_dice now takes the calculator's `notation`).
function checkSchemas(byName) {
  const ajv = new Ajv2020({ strict: false });
  for (const tool of Object.values(byName)) {
    assert.equal(tool.inputSchema.type, "object", tool.name);
    ajv.compile(tool.inputSchema);
    if (tool.outputSchema) ajv.compile(tool.outputSchema);
  }
  const props = (name) => byName[name].inputSchema.properties ?? {};
  const required = (name) => byName[name].inputSchema.required ?? [];
  assert.deepEqual(required("calculate"), ["operation", "a", "b"]);
  assert.deepEqual(props("calculate").operation.enum, ["add", "subtract", "multiply", "divide"]);
  assert.deepEqual(required("roll_dice"), ["notation"]);
  assert.equal(props("roll_dice").notation.type, "string");
  assert.equal(props("roll_dice").notation.pattern, "^\\s*[0-9]*[dD][0-9]+\\s*([+-]\\s*[0-9]+)?\\s*$");
  assert.deepEqual(required("tell_fortune"), []);
  assert.deepEqual(props("tell_fortune").category.enum, ["love", "career", "health", "wealth", "general"]);
  assert.equal(props("tell_fortune").category.default, "general");
  assert.deepEqual(required("read_temperature"), []);
  assert.deepEqual(props("read_temperature").unit.enum, ["celsius", "fahrenheit"]);
  assert.deepEqual(required("set_led"), ["led", "on"]);
  assert.deepEqual([props("set_led").led.minimum, props("set_led").led.maximum], [0, 1]);
  assert.deepEqual(required("uptime_ms"), []);
  assert.deepEqual(props("uptime_ms"), {});
  for (const name of Object.keys(byName)) assert.equal(byName[name].inputSchema.additionalProperties, false, name);
  // The schema and the parser agree on notations the pattern decides.
  const notation = ajv.compile(byName.roll_dice.inputSchema);
  for (const ok of ["2d6+3", "d20", " 4D8 - 1 "]) assert.ok(notation({ notation: ok }), ok);
  for (const bad of ["2x6", "2d", "2 d6", "+2d6"]) assert.ok(!notation({ notation: bad }), bad);
}

// `era` prefixes the timing names: "" for the 1.x client (initialize era), "modern sdk: " for
// the 2.x client pinned to 2026-07-28.
async function exerciseAllTools(client, era = "") {
  const opts = { timeout: TIMEOUT };
  const v2 = client instanceof ClientV2;
  // The firmware's mcp-core has no `pagination`: the whole list is one reply (it fits the
  // 4 KiB transmit buffer), never a nextCursor.
  const page = await timed(`${era}tools/list`, client.listTools(undefined, opts));
  assert.equal(page.nextCursor, undefined);
  const tools = page.tools;
  const names = tools.map((t) => t.name);
  assert.deepEqual(names, ["calculate", "roll_dice", "tell_fortune", "read_temperature", "set_led", "uptime_ms"]);
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  assert.equal(byName.set_led.annotations.readOnlyHint, false);
  assert.equal(byName.set_led.annotations.destructiveHint, false);
  assert.equal(byName.set_led.annotations.idempotentHint, true);
  assert.equal(byName.read_temperature.annotations.readOnlyHint, true);
  assert.equal(byName.calculate.annotations.readOnlyHint, true);
  checkSchemas(byName);

  // tools/call: the 1.x client takes (params, resultSchema, options), 2.x (params, options).
  const call = (name, args) =>
    timed(`${era}tools/call ${name}`, v2 ? client.callTool({ name, arguments: args }, opts) : client.callTool({ name, arguments: args }, undefined, opts));

  let r = await call("calculate", { operation: "multiply", a: 6, b: 7 });
  assert.deepEqual(structured(r), { result: 42 });
  r = await call("calculate", { operation: "divide", a: 1, b: 3 });
  assert.deepEqual(structured(r), { result: 0.333333 });
  r = await call("calculate", { operation: "subtract", a: 0.1, b: 2.25 });
  assert.deepEqual(structured(r), { result: -2.15 });
  r = await call("calculate", { operation: "divide", a: 1, b: 0 });
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /division by zero/);

  r = await call("roll_dice", { notation: "5d20" });
  let { rolls, modifier, total } = structured(r);
  assert.equal(rolls.length, 5);
  assert.ok(rolls.every((x) => Number.isInteger(x) && x >= 1 && x <= 20));
  assert.equal(modifier, 0);
  assert.equal(total, rolls.reduce((a, b) => a + b, 0));
  for (const [notation, count, sides, mod] of [["2d6+3", 2, 6, 3], ["d20", 1, 20, 0], [" 4D8 - 1 ", 4, 8, -1], ["100d1000-1000", 100, 1000, -1000]]) {
    r = await call("roll_dice", { notation });
    ({ rolls, modifier, total } = structured(r));
    assert.equal(rolls.length, count, notation);
    assert.ok(rolls.every((x) => x >= 1 && x <= sides), notation);
    assert.equal(modifier, mod, notation);
    assert.equal(total, rolls.reduce((a, b) => a + b, 0) + mod, notation);
  }
  // A refused notation is a tool error naming the argument and what is wrong with it.
  for (const [notation, problem] of [
    ["2x6", "expected NdS, NdS+M or NdS-M, e.g. 2d6+3, d20, 4d8-1"],
    ["2d", "expected NdS, NdS+M or NdS-M, e.g. 2d6+3, d20, 4d8-1"],
    ["101d6", "roll 1 to 100 dice"],
    ["0d6", "roll 1 to 100 dice"],
    ["3d1", "dice have 2 to 1000 sides"],
    ["d6+1001", "the modifier is at most 1000"],
  ]) {
    r = await call("roll_dice", { notation });
    assert.equal(r.isError, true, notation);
    assert.equal(r.content[0].text, `Invalid arguments for tool roll_dice: argument \`notation\`: ${problem}`, notation);
  }
  // Arguments the schema refuses: a wrong type, a missing and an unknown member, each named.
  for (const [name, args, message] of [
    ["roll_dice", { notation: 6 }, "argument `notation`: must be a string"],
    ["roll_dice", {}, "argument `notation`: is required"],
    ["roll_dice", { notation: "d6", sides: 6 }, 'arguments: unknown member "sides"'],
    ["set_led", { led: "1", on: true }, "argument `led`: must be an integer"],
    ["set_led", { led: 2, on: true }, "argument `led`: must be 0 or 1"],
    ["set_led", { led: 0, on: "yes" }, "argument `on`: must be a boolean"],
    ["calculate", { operation: "power", a: 1, b: 2 }, 'argument `operation`: must be one of "add", "subtract", "multiply", "divide"'],
    ["calculate", { operation: "add", a: 1e13, b: 0 }, "argument `a`: must be below 9.2e12 in magnitude"],
    ["tell_fortune", { category: 3 }, "argument `category`: must be a string"],
    ["uptime_ms", { verbose: true }, 'arguments: unknown member "verbose"'],
  ]) {
    r = await call(name, args);
    assert.equal(r.isError, true, `${name} ${JSON.stringify(args)}`);
    assert.equal(r.content[0].text, `Invalid arguments for tool ${name}: ${message}`);
  }

  r = await call("tell_fortune", { category: "career" });
  assert.equal(r.content[0].type, "text");
  assert.ok(r.content[0].text.length > 10);

  r = await call("read_temperature", {});
  assert.equal(structured(r).unit, "celsius");
  assert.ok(structured(r).temperature >= 19.5 && structured(r).temperature <= 24.5);
  r = await call("read_temperature", { unit: "fahrenheit" });
  assert.ok(structured(r).temperature >= 67 && structured(r).temperature <= 76.5);

  r = await call("set_led", { led: 1, on: true });
  assert.deepEqual(structured(r), { leds: [false, true] });
  r = await call("set_led", { led: 0, on: true });
  assert.deepEqual(structured(r), { leds: [true, true] });
  r = await call("set_led", { led: 1, on: false });
  assert.deepEqual(structured(r), { leds: [true, false] });

  const a = structured(await call("uptime_ms", {})).uptime_ms;
  await new Promise((ok) => setTimeout(ok, 300));
  const b = structured(await call("uptime_ms", {})).uptime_ms;
  assert.ok(b - a >= 250 && b - a < 5000, `uptime advanced ${b - a} ms over 300 ms`);

  if (v2) {
    // ping belongs to the handshake era: the 2.x client refuses it itself in 2026-07-28.
    await assert.rejects(client.ping(opts));
  } else {
    await timed("ping", client.ping(opts));
  }
  return tools.length;
}

// ---- 1. SDK client, the embedded convention: `cargo run --release` in the package ----
const env = { ...process.env, CARGO_TERM_QUIET: "true" };
{
  const transport = new StdioClientTransport({
    command: "cargo",
    args: ["run", "--release", "--quiet", ...targetArgs],
    cwd: firmwareDir,
    env,
    stderr: "inherit",
  });
  const client = await sdkSession("sdk (cargo run in examples/firmware)", transport);
  const n = await exerciseAllTools(client);
  await client.close();
  console.log(`ok [${boardName}]: TypeScript SDK listed ${n} tools and called each one`);
}

// ---- 2. SDK client, the documented command from the repository root ----
{
  const transport = new StdioClientTransport({
    command: "cargo",
    args: [
      "--config", "examples/firmware/.cargo/config.toml",
      "run", "--release", "--quiet",
      "--manifest-path", "examples/firmware/Cargo.toml",
      ...targetArgs,
    ],
    cwd: repoRoot,
    env,
    stderr: "inherit",
  });
  const client = await sdkSession("sdk (cargo --config ... from the repo root)", transport);
  const r = await timed("tools/call uptime_ms", client.callTool({ name: "uptime_ms", arguments: {} }, undefined, { timeout: TIMEOUT }));
  assert.ok(Number.isInteger(r.structuredContent.uptime_ms));
  await client.close();
  console.log(`ok [${boardName}]: the repository-root launch command serves MCP`);
}

// ---- 3. SDK 2.x client pinned to 2026-07-28, over stdio (`cargo run` in the package) ----
{
  const transport = new StdioV2({
    command: "cargo",
    args: ["run", "--release", "--quiet", ...targetArgs],
    cwd: firmwareDir,
    env,
    stderr: "inherit",
  });
  const client = new ClientV2({ name: "mcp-rs-firmware-interop", version: "1.0.0" }, { capabilities: {}, versionNegotiation: { mode: { pin: MODERN } } });
  await timed("modern sdk: connect (spawn + QEMU boot, no initialize)", client.connect(transport, { timeout: TIMEOUT }));
  assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
  const n = await exerciseAllTools(client, "modern sdk: ");
  await client.close();
  console.log(`ok [${boardName}]: TypeScript SDK 2.x (${MODERN}) listed ${n} tools and called each one`);
}

// ---- 4. Raw 2026-07-28 (stateless) requests through the wrapper; exit on stdin EOF ----
{
  const child = spawn(resolve(firmwareDir, "qemu-run"), ["-M", board.machine, elf], { stdio: ["pipe", "pipe", "inherit"] });
  let buffered = "";
  const waiting = [];
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk) => {
    buffered += chunk;
    let i;
    while ((i = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, i);
      buffered = buffered.slice(i + 1);
      waiting.shift()?.(JSON.parse(line));
    }
  });
  const exited = new Promise((ok) => child.on("exit", (code, signal) => ok({ code, signal })));
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
  };
  let id = 0;
  const request = (label, method, params) =>
    timed(label, new Promise((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(`${method}: no reply in ${TIMEOUT} ms`)), TIMEOUT);
      waiting.push((msg) => {
        clearTimeout(timer);
        ok(msg);
      });
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params: { ...params, _meta: meta } }) + "\n");
    }));

  let r = await request("modern: server/discover (incl. QEMU boot)", "server/discover", {});
  assert.ok(r.result.supportedVersions.includes("2026-07-28"), JSON.stringify(r));
  r = await request("modern: tools/list", "tools/list", {});
  assert.equal(r.result.resultType, "complete");
  assert.equal(r.result.nextCursor, undefined);
  assert.equal(r.result.tools.length, 6);
  // No cursor is ever handed out, so any cursor is invalid (-32602), and `null` is none.
  r = await request("modern: tools/list with a cursor", "tools/list", { cursor: "AgEAAAAAAgAAAJelOIpkLxgb" });
  assert.equal(r.error.code, -32602, JSON.stringify(r));
  assert.equal(r.error.message, "Invalid cursor");
  r = await request("modern: tools/list with a null cursor", "tools/list", { cursor: null });
  assert.equal(r.result.tools.length, 6);
  r = await request("modern: tools/call calculate", "tools/call", { name: "calculate", arguments: { operation: "add", a: 2, b: 40 } });
  assert.deepEqual(r.result.structuredContent, { result: 42 });
  assert.equal(r.result.resultType, "complete");
  r = await request("modern: tools/call set_led", "tools/call", { name: "set_led", arguments: { led: 0, on: true } });
  assert.deepEqual(r.result.structuredContent, { leds: [true, false] });
  // JSON Schema counts 1.0 and 0e5 as integers, and so does the firmware (raw text: a
  // JavaScript client would print them as 1 and 0).
  for (const [led, leds] of [["1.0", [true, true]], ["0e5", [false, true]]]) {
    const line = `{"jsonrpc":"2.0","id":"led${led}","method":"tools/call","params":{"name":"set_led","arguments":{"led":${led},"on":${led === "1.0"}},"_meta":${JSON.stringify(meta)}}}`;
    child.stdin.write(line + "\n");
    const reply = await new Promise((ok) => waiting.push(ok));
    assert.deepEqual(reply.result.structuredContent, { leds }, line);
  }
  // A garbled line and an oversized one (the receive buffer is 1 KiB) are answered and skipped.
  child.stdin.write("{garbage\n");
  const garbled = await new Promise((ok) => waiting.push(ok));
  assert.equal(garbled.error.code, -32700);
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: "big", method: "ping", params: { pad: "x".repeat(1500) } }) + "\n");
  const oversized = await new Promise((ok) => waiting.push(ok));
  assert.equal(oversized.error.code, -32600);
  r = await request("modern: tools/call uptime_ms", "tools/call", { name: "uptime_ms", arguments: {} });
  assert.ok(Number.isInteger(r.result.structuredContent.uptime_ms));

  const t0 = performance.now();
  child.stdin.end();
  const { code, signal } = await exited;
  record("wrapper exit after stdin EOF", performance.now() - t0);
  assert.equal(code, 0, `wrapper exit code ${code} signal ${signal}`);
  console.log(`ok [${boardName}]: 2026-07-28 requests served; the wrapper exits 0 on stdin EOF`);
}

// Every timed exchange was checked: count them by era and client.
const count = (prefix) => Object.entries(times).reduce((n, [name, l]) => n + (name.startsWith(prefix) && !name.includes("connect") ? l.length : 0), 0);
const sdk1 = Object.entries(times).reduce((n, [name, l]) => n + (/^(modern|wrapper)/.test(name) ? 0 : l.length), 0);
console.log(`ok [${boardName}]: ${sdk1} SDK 1.x (handshake era), ${count("modern sdk:")} SDK 2.x and ${count("modern:")} raw 2026-07-28 exchanges checked`);
console.log(`\nQEMU round-trip times on ${boardName} (ms): name  n  min  median  max`);
for (const [name, list] of Object.entries(times)) {
  const sorted = [...list].sort((a, b) => a - b);
  const med = sorted[Math.floor(sorted.length / 2)];
  const f = (x) => x.toFixed(1).padStart(7);
  console.log(`  ${name.padEnd(58)} ${String(list.length).padStart(2)} ${f(sorted[0])} ${f(med)} ${f(sorted.at(-1))}`);
}
