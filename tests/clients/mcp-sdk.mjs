// Drives `sandbench mcp` with the official MCP TypeScript SDK, as an agent
// host would: over stdio (the SDK starts the server) or Streamable HTTP (a
// running server, its token). Run by tests/integration/test-mcp-sdk.c; prints
// "ok STEP" per step and exits 1 at the first failure. Node >= 18.
//
//   node mcp-sdk.mjs stdio SANDBENCH ROOT IMAGE FOREIGN
//   node mcp-sdk.mjs http URL TOKEN IMAGE FOREIGN
//   node mcp-sdk.mjs bridge SANDBENCH SOCKET IMAGE FOREIGN USER
//                                (`sandbench mcp --connect SOCKET` run as USER)
//   node mcp-sdk.mjs refusals URL TOKEN
//   node mcp-sdk.mjs extras URL TOKEN   (tests/clients/conformance-server)
// FOREIGN: a sandbox the test made without this server: removing it is refused.
// refusals: a wrong token, a foreign Origin, an oversized body and malformed
// JSON-RPC, each refused with its status. extras: what the conformance suite
// does not check of an extra tool's result and notifications.
import assert from "node:assert/strict";
import net from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const TOOLS = [
  "sandbox_create", "sandbox_list", "sandbox_inspect", "sandbox_exec", "session_start", "session_send",
  "session_read", "session_kill", "file_read", "file_write", "file_list", "sandbox_diff", "sandbox_stop",
  "sandbox_restore", "sandbox_remove", "image_list", "sandbox_fork", "sandbox_commit", "image_build", "image_push",
  "service_logs",
  "sandbox_pause", "sandbox_resume", "pool_set", "pool_ls", "pool_rm",
];
const WAIT_MS = 60000;

const [mode, a1, a2, image, foreign, user] = process.argv.slice(2);
const name = `mcp-sdk-${mode}-${process.pid}`;

function ok(step) {
  console.log(`ok ${step}`);
}

async function call(client, tool, args, options) {
  const r = await client.callTool({ name: tool, arguments: args }, undefined, options);
  assert.ok(!r.isError, `${tool} failed: ${JSON.stringify(r.content)}`);
  assert.equal(r.content[0].type, "text");
  assert.deepEqual(JSON.parse(r.content[0].text), r.structuredContent, `${tool}: text and structured content differ`);
  return r.structuredContent;
}

async function waitFor(what, cond) {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function sleepers(client) {
  const r = await call(client, "sandbox_exec", { name, command: ["ps", "-o", "args"] });
  return r.stdout.split("\n").filter((l) => l.startsWith("sleep 1000")).length;
}

function transport() {
  if (mode === "stdio")
    return new StdioClientTransport({ command: a1, args: ["--root", a2, "mcp"], stderr: "inherit" });
  if (mode === "bridge")
    return new StdioClientTransport({ command: "runuser", args: ["-u", user, "--", a1, "mcp", "--connect", a2],
                                      stderr: "inherit" });
  return new StreamableHTTPClientTransport(new URL(a1), {
    requestInit: { headers: { Authorization: `Bearer ${a2}` } },
  });
}

async function lifecycle(client) {
  assert.equal(client.getServerVersion().name, "sandbench");
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), [...TOOLS].sort());
  for (const t of tools) assert.equal(t.inputSchema.type, "object", t.name);
  await client.ping();
  ok("initialize, tools/list, ping");
}

async function sandbox(client) {
  const box = await call(client, "sandbox_create", { name, image, network: false, kind: "temporary", disk: "64m" });
  assert.equal(box.name, name);
  assert.equal(box.state, "running");
  assert.equal(box.owner, "mcp");
  assert.equal(box.resources.disk, 64 << 20);
  assert.ok(box.disk_usage.size > 0 && box.disk_usage.size <= 64 << 20, JSON.stringify(box.disk_usage));
  await refused(client, "sandbox_create", { name: `${name}-bad`, image, disk: "1m" }, "invalid", /too small/);
  await refused(client, "sandbox_create", { name: `${name}-bad`, image, disk: "lots" }, "invalid", /disk size/);
  const listed = await call(client, "sandbox_list", { owner: "mcp" });
  assert.ok(listed.sandboxes.some((s) => s.name === name));
  const x = await call(client, "sandbox_exec", { name, command: ["sh", "-c", "echo $((6*7)); exit 3"] });
  assert.equal(x.stdout, "42\n");
  assert.equal(x.exit_code, 3);
  ok("sandbox_create (with a disk cap and its refusals), sandbox_list, sandbox_exec");
  // sandbench's own log as logging notifications, while the client asks for debug
  const logs = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  await client.setLoggingLevel("debug");
  await call(client, "sandbox_exec", { name, command: ["true"] });
  assert.ok(logs.some((l) => l.logger === "sandbench" && /runsc exec/.test(l.data)), JSON.stringify(logs));
  await client.setLoggingLevel("info");
  const seen = logs.length;
  await call(client, "sandbox_exec", { name, command: ["true"] });
  assert.equal(logs.length, seen, "no log above debug");
  ok("logging/setLevel debug: sandbench's log as notifications/message");
}

// the timeline and the session's log as resources; subscribed to (stdio), they
// are announced when they grow, and no more after unsubscribing
async function resources(client, sid) {
  const caps = client.getServerCapabilities();
  const tl = `sandbench://sandboxes/${name}/timeline`, log = `sandbench://sandboxes/${name}/sessions/${sid}/log`;
  const { resourceTemplates } = await client.listResourceTemplates();
  assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate).sort(),
                   ["sandbench://sandboxes/{name}/sessions/{session}/log", "sandbench://sandboxes/{name}/timeline"]);
  const { resources: listed } = await client.listResources();
  assert.ok(listed.some((r) => r.uri === tl) && listed.some((r) => r.uri === log), JSON.stringify(listed));
  const t = await client.readResource({ uri: tl });
  const entries = t.contents[0].text.trim().split("\n").map((l) => JSON.parse(l));
  assert.ok(entries.some((e) => e.kind === "exec") && entries.some((e) => e.kind === "input"), t.contents[0].text);
  const l = await client.readResource({ uri: log });
  assert.equal(l.contents[0].mimeType, "text/plain");
  assert.match(l.contents[0].text, /# 42$/m);
  await assert.rejects(client.readResource({ uri: "sandbench://sandboxes/no-such-box/timeline" }), /-32002/);
  await assert.rejects(client.readResource({ uri: "sandbench://sandboxes/../../etc/timeline" }), /-32602/);
  await assert.rejects(client.readResource({ uri: `sandbench://sandboxes/${name}/sessions/../log` }), /-32602/);
  await assert.rejects(client.readResource({ uri: "file:///etc/passwd" }), /-32602/);
  ok("resources: templates, list, read of a timeline and a session log, unknown and bad URIs");
  if (mode === "http") {
    assert.equal(caps.resources.subscribe, false, "no server-initiated stream over HTTP: no subscriptions");
    return;
  }
  assert.equal(caps.resources.subscribe, true);
  const updated = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updated.push(n.params.uri));
  await client.subscribeResource({ uri: log });
  await client.subscribeResource({ uri: tl });
  await call(client, "session_send", { name, session: sid, text: "echo resource-update" });
  await waitFor("updates of the log and the timeline", async () => updated.includes(log) && updated.includes(tl));
  const l2 = await client.readResource({ uri: log });
  assert.match(l2.contents[0].text, /# resource-update$/m);
  await client.unsubscribeResource({ uri: log });
  await client.unsubscribeResource({ uri: tl });
  const seen = updated.length;
  const sent = await call(client, "session_send", { name, session: sid, text: "echo quiet" });
  await call(client, "session_read", { name, session: sid, since: sent.offset, max_wait: 30 });
  await client.ping();
  assert.equal(updated.length, seen, "no updates after unsubscribing");
  ok("resources/subscribe: updated after a session send; none after unsubscribe");
}

async function session(client) {
  const s = await call(client, "session_start", { name });
  assert.equal(s.state, "running");
  const sent = await call(client, "session_send", { name, session: s.id, text: "cd /tmp; echo $((6*7))" });
  const r = await call(client, "session_read", { name, session: s.id, since: sent.offset, max_wait: 30 });
  assert.equal(r.reason, "prompt", JSON.stringify(r));
  assert.match(r.output, /^42$/m);
  assert.equal(r.exit_code, 0);
  // the shell keeps its state between sends
  const sent2 = await call(client, "session_send", { name, session: s.id, text: "pwd" });
  const r2 = await call(client, "session_read", { name, session: s.id, since: sent2.offset, max_wait: 30 });
  assert.match(r2.output, /^\/tmp$/m);
  // nothing comes: the read ends at max_wait and reports progress meanwhile
  let progress = 0;
  const r3 = await call(client, "session_read", { name, session: s.id, since: r2.offset, max_wait: 2.5 },
                        { onprogress: () => progress++ });
  assert.equal(r3.reason, "max_wait");
  assert.ok(progress >= 1, `progress notifications: ${progress}`);
  // a waiting read cancelled: rejected, and the server goes on
  const ac = new AbortController();
  const waiting = client.callTool({ name: "session_read", arguments: { name, session: s.id, since: r2.offset, max_wait: 1000 } },
                                  undefined, { signal: ac.signal, timeout: 3600000 }).then(() => false, () => true);
  ac.abort();
  assert.ok(await waiting, "the cancelled read was rejected");
  await client.ping();
  await resources(client, s.id);
  await call(client, "session_kill", { name, session: s.id });
  ok("session_start, session_send, session_read, progress, a cancelled read, session_kill");
}

async function files(client) {
  const content = "written through MCP\nline 2\n";
  const w = await call(client, "file_write", { name, path: "/workspace/hello.txt", content });
  assert.equal(w.size, content.length);
  const r = await call(client, "file_read", { name, path: "/workspace/hello.txt" });
  assert.equal(r.content, content);
  const l = await call(client, "file_list", { name, path: "/workspace" });
  assert.ok(l.entries.some((e) => e.name === "hello.txt"), JSON.stringify(l));
  const d = await call(client, "sandbox_diff", { name });
  assert.ok(d.workspace.changes.some((c) => c.path === "/workspace/hello.txt"), JSON.stringify(d));
  const missing = await client.callTool({ name: "file_read", arguments: { name, path: "/workspace/none" } });
  assert.ok(missing.isError);
  ok("file_write, file_read, file_list, sandbox_diff");
}

async function cancel(client) {
  const ac = new AbortController();
  const long = client.callTool({ name: "sandbox_exec", arguments: { name, command: ["sleep", "1000"] } },
                               undefined, { signal: ac.signal, timeout: 3600000 });
  const rejected = long.then(() => false, () => true);
  await waitFor("sleep 1000 to run", async () => (await sleepers(client)) === 1);
  // the server answers while the call runs
  await client.ping();
  ac.abort();
  assert.ok(await rejected, "the cancelled call was rejected");
  await waitFor("sleep 1000 to end", async () => (await sleepers(client)) === 0);
  ok("cancel a long exec: its command ended");
}

// a tool call that must fail, with what its structured error says
async function refused(client, tool, args, code, pattern) {
  const r = await client.callTool({ name: tool, arguments: args });
  assert.ok(r.isError, `${tool} ${JSON.stringify(args)} was not refused`);
  assert.equal(r.structuredContent.error, code, `${tool}: ${JSON.stringify(r.structuredContent)}`);
  if (pattern) assert.match(r.structuredContent.message, pattern);
}

async function pool(client) {
  await refused(client, "pool_set", { image, size: 0 }, "invalid");
  await refused(client, "pool_set", { image, size: 1, network: "on" }, "invalid", /network/);
  await refused(client, "pool_set", { image: "nosuch:image", size: 1 }, "not-found");
  await refused(client, "pool_rm", { image }, "not-found", /no warm pool/);
  await refused(client, "pool_rm", {}, "invalid");
  const s = await call(client, "pool_set", { image, size: 1, memory: "512m" });
  assert.equal(s.profiles.length, 1, JSON.stringify(s));
  assert.equal(s.profiles[0].size, 1);
  assert.equal(s.profiles[0].memory, 512 * 1024 * 1024);
  const l = await call(client, "pool_ls", {});
  assert.equal(l.profiles[0].image, image, JSON.stringify(l));
  // waits for the refill pool_set started, then removes what it booted
  await call(client, "pool_rm", { all: true });
  assert.equal((await call(client, "pool_ls", {})).profiles.length, 0);
  ok("pool_set, pool_ls, pool_rm and their refusals");
}

async function images(client) {
  const ref = `mcp-sdk-${mode}-${process.pid}:v1`;
  await call(client, "sandbox_exec", { name, command: ["sh", "-c", "echo committed > /etc/mcp-commit"] });
  const c = await call(client, "sandbox_commit", { name, ref, message: "from MCP", changes: ["ENV MCP_COMMIT=yes"] });
  assert.equal(c.reference, `localhost/${ref}`);
  assert.match(c.digest, /^sha256:[0-9a-f]{64}$/);
  assert.ok(c.entries > 0, JSON.stringify(c));
  const child = `${name}-child`;
  await call(client, "sandbox_create", { name: child, image: c.reference, network: false, kind: "temporary" });
  const x = await call(client, "sandbox_exec", { name: child, command: ["cat", "/etc/mcp-commit"] });
  assert.equal(x.stdout, "committed\n");
  const { images: imgs } = await call(client, "image_list", {});
  const made = imgs.find((i) => i.digest === c.digest);
  assert.ok(made, JSON.stringify(imgs));
  await call(client, "sandbox_remove", { name: child });
  ok("sandbox_commit, then a sandbox from the new image");
  const fork = `${name}-fork`;
  const f = await call(client, "sandbox_fork", { source: name, name: fork });
  assert.equal(f.name, fork);
  assert.equal(f.owner, "mcp");
  assert.equal(f.fork.memory, true, JSON.stringify(f.fork));
  const y = await call(client, "sandbox_exec", { name: fork, command: ["cat", "/etc/mcp-commit"] });
  assert.equal(y.stdout, "committed\n");
  await call(client, "sandbox_remove", { name: fork });
  const src = await call(client, "sandbox_inspect", { name });
  assert.equal(src.state, "running");
  ok("sandbox_fork: the fork has the source's disk, is this server's, the source runs on");
  await refused(client, "sandbox_commit", { name, ref: "Bad Name!" }, "invalid");
  await refused(client, "sandbox_commit", { name, ref: "x", changes: ["FROBNICATE x"] }, "invalid");
  await refused(client, "sandbox_commit", { name, ref: "sandbench/default" }, "unsafe", /sandbench's own/);
  await refused(client, "sandbox_commit", { name: "no-such-sandbox", ref: "x" }, "not-found");
  await refused(client, "sandbox_fork", { source: foreign, name: `${name}-f2` }, "state", /not created by this MCP server/);
  await refused(client, "sandbox_fork", { source: name, name: "bad/name" }, "invalid");
  await refused(client, "sandbox_fork", { source: "no-such-sandbox", name: `${name}-f3` }, "not-found");
  await refused(client, "image_build", { ref: "x", context: "/etc" }, "unsafe", /allow-list/);
  await refused(client, "image_push", { image: "localhost/no-such-image:1", dest: "127.0.0.1:9/x:1" }, "not-found");
  ok("commit, fork, build and push refusals: bad names, unknown sandbox or image, foreign source, host path");
}

// a port nothing listens on now (the kernel's choice)
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    }).on("error", reject);
  });
}

async function services(client) {
  const svc = `${name}-svc`, port = await freePort();
  const box = await call(client, "sandbox_create", {
    name: svc, image, network: true, publish: [{ host_port: port, port: 8080 }],
    service: { command: "echo mcp-$((6*7)) > /tmp/index.html; echo service-up; exec httpd -f -p 8080 -h /tmp",
               health: "test -f /tmp/index.html", health_interval: 1, restart: "always" },
  });
  assert.equal(box.kind, "permanent", "a service sandbox is permanent");
  await waitFor("the service's output", async () =>
    /service-up/.test((await call(client, "service_logs", { name: svc })).output));
  await waitFor("the published port on 127.0.0.1", async () => {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/`);
      return r.ok && (await r.text()) === "mcp-42\n";
    } catch {
      return false;
    }
  });
  const tail = await call(client, "service_logs", { name: svc, max_bytes: 3 });
  assert.equal(tail.truncated, true, JSON.stringify(tail));
  assert.equal(tail.output.length, 3);
  const later = await call(client, "service_logs", { name: svc, since_offset: tail.offset });
  assert.equal(later.output, "", "nothing new after the offset");
  await call(client, "sandbox_remove", { name: svc });
  await refused(client, "service_logs", { name }, "invalid", /no service/);
  await refused(client, "sandbox_create", { name: `${name}-bad`, image, network: false,
                                            publish: [{ host_port: port, port: 80 }] }, "invalid", /network on/);
  await refused(client, "sandbox_create", { name: `${name}-bad`, image, kind: "temporary",
                                            service: { command: "true" } }, "invalid", /permanent/);
  const bad = await client.callTool({ name: "sandbox_create", arguments: {
    name: `${name}-bad`, image, network: true, publish: [{ host_port: port, port: 80, address: "0.0.0.0" }] } });
  assert.ok(bad.isError, "a client cannot choose the host address");
  ok("sandbox_create with a service and a published loopback port, service_logs, refusals");
}

async function faults(client) {
  const bad = await client.callTool({ name: "sandbox_inspect", arguments: { nam: "x" } });
  assert.ok(bad.isError);
  await assert.rejects(client.callTool({ name: "no_such_tool", arguments: {} }), /-32602|Unknown tool/);
  const refused = await client.callTool({ name: "sandbox_remove", arguments: { name: foreign } });
  assert.ok(refused.isError, "removing a sandbox of another creator");
  assert.match(refused.content[0].text, /not created by this MCP server/);
  ok("tool errors, unknown tool, foreign sandbox kept");
}

async function remove(client) {
  const r = await call(client, "sandbox_remove", { name });
  assert.equal(r.removed, true);
  const listed = await call(client, "sandbox_list", {});
  assert.ok(!listed.sandboxes.some((s) => s.name === name));
  ok("sandbox_remove");
}

function httpClient(headers) {
  const c = new Client({ name: "sandbench-test", version: "1.0.0" });
  return [c, new StreamableHTTPClientTransport(new URL(a1), { requestInit: { headers } })];
}

// the SDK's StreamableHTTPError carries the HTTP status as its code
const httpStatus = (want) => (e) => {
  assert.equal(e.code, want, String(e));
  return true;
};

async function refusals() {
  const [c1, t1] = httpClient({ Authorization: "Bearer wrong" });
  await assert.rejects(c1.connect(t1), httpStatus(401));
  ok("wrong token: 401");
  const [c2, t2] = httpClient({ Authorization: `Bearer ${a2}`, Origin: "http://attacker.example" });
  await assert.rejects(c2.connect(t2), httpStatus(403));
  ok("foreign Origin: 403");
  const [c3, t3] = httpClient({ Authorization: `Bearer ${a2}`, Origin: "http://localhost:8080" });
  await c3.connect(t3);
  await c3.ping();
  await assert.rejects(
    c3.callTool({ name: "file_write", arguments: { name: "x", path: "/x", content: "y".repeat(2 << 20) } }), httpStatus(413));
  await c3.ping();
  ok("loopback Origin accepted; oversized body: 413, the session goes on");
  const post = (body, extra = {}) => fetch(a1, {
    method: "POST", body,
    headers: { Authorization: `Bearer ${a2}`, "Content-Type": "application/json",
               Accept: "application/json, text/event-stream", "Mcp-Session-Id": t3.sessionId, ...extra },
  });
  const bad = await post("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ");
  assert.equal(bad.status, 400);
  assert.equal((await bad.json()).error.code, -32700);
  const notrpc = await post(JSON.stringify({ id: 1, method: "ping" }));
  assert.equal((await notrpc.json()).error.code, -32600);
  ok("malformed JSON-RPC: parse error, invalid request");
  // a worker's call that can send nothing before its answer: that answer
  // alone, as JSON; asked for progress: an event stream
  const read = (meta) => post(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call",
    params: { name: "file_read", arguments: { name: "nosuch", path: "/x" }, ...meta } }));
  const held = await read({});
  assert.equal(held.headers.get("content-type"), "application/json");
  assert.equal((await held.json()).result.isError, true);
  const streamed = await read({ _meta: { progressToken: 1 } });
  assert.match(streamed.headers.get("content-type"), /^text\/event-stream/);
  assert.match(await streamed.text(), /^event: message\ndata: .*"isError":true/m);
  ok("a worker's call: its answer alone as JSON, as an event stream when progress is asked for");
  const get = await fetch(a1, { headers: { Authorization: `Bearer ${a2}`, Accept: "text/event-stream" } });
  assert.equal(get.status, 405);
  const sid = t3.sessionId;
  await t3.terminateSession();
  await c3.close();
  const gone = await post(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }), { "Mcp-Session-Id": sid });
  assert.equal(gone.status, 404);
  ok("GET: 405; DELETE ends the session: 404 after");
}

// The conformance server's tools: a result the protocol does not allow is an
// error; logging/setLevel filters a tool's messages; progress only when asked.
async function extras() {
  const [c, t] = httpClient({ Authorization: `Bearer ${a2}` });
  await c.connect(t);
  const bad = await c.callTool({ name: "bad_content", arguments: {} });
  assert.equal(bad.isError, true, JSON.stringify(bad));
  assert.equal(bad.structuredContent.error, "format");
  assert.match(bad.content[0].text, /bad_content/);
  ok("a content block of an unknown type: a tool error");
  const logs = [];
  c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  await c.setLoggingLevel("warning");
  await c.callTool({ name: "test_tool_with_logging", arguments: {} });
  assert.equal(logs.length, 0, JSON.stringify(logs));
  await c.setLoggingLevel("info");
  await c.callTool({ name: "test_tool_with_logging", arguments: {} });
  assert.deepEqual(logs.map((l) => [l.level, l.logger, l.data]), [
    ["info", "test_tool_with_logging", "Tool execution started"],
    ["info", "test_tool_with_logging", "Tool processing data"],
    ["info", "test_tool_with_logging", "Tool execution completed"],
  ]);
  ok("a tool's messages: none below the level set, all three at info");
  const progress = [];
  const r = await c.callTool({ name: "test_tool_with_progress", arguments: {} }, undefined,
    { onprogress: (p) => progress.push(p) });
  assert.ok(!r.isError && progress.length === 3, JSON.stringify(progress));
  assert.deepEqual(progress.map((p) => [p.progress, p.total]), [[0, 100], [50, 100], [100, 100]]);
  ok("a tool's progress: 0, 50, 100 of 100");
  await c.close();
}

if (mode === "refusals" || mode === "extras") {
  try {
    await (mode === "refusals" ? refusals() : extras());
    process.exit(0);
  } catch (e) {
    console.error(`not ok: ${e.stack || e}`);
    process.exit(1);
  }
}

const client = new Client({ name: "sandbench-test", version: "1.0.0" });
let status = 0;
try {
  await client.connect(transport());
  await lifecycle(client);
  await sandbox(client);
  await session(client);
  await files(client);
  await cancel(client);
  await images(client);
  await pool(client);
  if (mode === "stdio") await services(client);
  await faults(client);
  await remove(client);
} catch (e) {
  console.error(`not ok: ${e.stack || e}`);
  status = 1;
} finally {
  await client.close().catch(() => {});
}
process.exit(status);
