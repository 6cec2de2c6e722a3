#!/usr/bin/env node
// Interop check: drive examples/everything with the official MCP TypeScript SDK
// client and assert what comes back.
//
//   node interop/client.mjs http  http://127.0.0.1:PORT/mcp
//   node interop/client.mjs stdio bin/everything -stdio
//
// Steps (the legacy lifecycle, the only one SDK 1.x speaks): initialize
// (connect), tools/list, every content type, a tool error, x-mcp-header
// arguments, progress, logging, the server's sampling/createMessage and
// elicitation/create requests, the input_required tools (through the server's
// legacy shim: elicitation, sampling and roots/list requests, several rounds),
// roots list changes, resources, prompts, completion, a resource subscription
// and list changes (triggered by the fixture's interop_trigger_* tools), a
// cancellation the server must see, then (HTTP) DELETE the session, and close.
// Prints one "ok"/"not ok" line per step and
// then "interop-<transport>: N passed, M failed". Exits 1 on any failure and
// gives up after MCPKIT_INTEROP_TIMEOUT_MS (default 60000) so it never hangs.
//
// Run `npm ci` in interop/ first (scripts/interop.sh does it).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ProgressNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import {
  FIRST_ROOT, SECOND_ROOT, formAnswer, inputRequiredChecks, legacyRequestChecks, poll, promptText, sleep, toolText,
} from './common.mjs';

const SIMPLE_TEXT = 'This is a simple text response for testing.';
const STATIC_TEXT = 'This is the content of the static text resource.';
const CANNED_SAMPLING_ANSWER = 'Canned reply from the mcpkit interop client.';
const REQUEST_TIMEOUT_MS = 20_000;
const OVERALL_TIMEOUT_MS = Number(process.env.MCPKIT_INTEROP_TIMEOUT_MS) || 60_000;

const [mode, ...target] = process.argv.slice(2);
if (!['http', 'stdio'].includes(mode) || target.length === 0 || (mode === 'http' && target.length !== 1)) {
  console.error('usage: node interop/client.mjs http <url>');
  console.error('       node interop/client.mjs stdio <command> [args...]');
  process.exit(2);
}
const label = `interop-${mode}`;

let transport;
if (mode === 'http') {
  transport = new StreamableHTTPClientTransport(new URL(target[0]));
} else {
  transport = new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: 'inherit' });
}

const client = new Client(
  { name: 'mcpkit-interop-client', version: '0.0.0' },
  { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } },
);

// Answer the server's sampling/createMessage with a fixed assistant message,
// and remember what was asked so the test can check it.
const samplingRequests = [];
client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
  samplingRequests.push(request.params);
  return {
    role: 'assistant',
    content: { type: 'text', text: CANNED_SAMPLING_ANSWER },
    model: 'interop-canned-model',
    stopReason: 'endTurn',
  };
});
// Elicitations are answered as a user would (common.mjs), roots/list with the declared roots.
client.setRequestHandler(ElicitRequestSchema, async (request) => ({ action: 'accept', content: formAnswer(request.params.requestedSchema) }));
const roots = [FIRST_ROOT];
client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [...roots] }));

// What the server sends on its own: log messages, resource updates and list changes.
const logs = [];
let updated = 0;
const listChanged = { tools: 0, prompts: 0, resources: 0 };
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { if (n.params.uri === 'test://watched-resource') updated++; });
client.setNotificationHandler(ToolListChangedNotificationSchema, () => { listChanged.tools++; });
client.setNotificationHandler(PromptListChangedNotificationSchema, () => { listChanged.prompts++; });
client.setNotificationHandler(ResourceListChangedNotificationSchema, () => { listChanged.resources++; });
client.onerror = (err) => console.error(`${label}: transport error: ${err?.message ?? err}`);

// Never hang: after the overall budget, report and exit non-zero.
const guard = setTimeout(async () => {
  console.error(`${label}: timed out after ${OVERALL_TIMEOUT_MS} ms`);
  console.log(`${label}: ${passed} passed, ${failed + 1} failed`);
  await Promise.race([transport.close().catch(() => {}), new Promise((r) => setTimeout(r, 2000))]);
  process.exit(1);
}, OVERALL_TIMEOUT_MS);
guard.unref();

let passed = 0;
let failed = 0;
let skipped = 0;
let broken = false; // set when a failure leaves nothing sensible to test

async function step(name, fn, { critical = false } = {}) {
  if (broken) {
    skipped++;
    console.log(`skip - ${name}`);
    return;
  }
  try {
    await fn();
    passed++;
    console.log(`ok - ${name}`);
  } catch (err) {
    failed++;
    console.log(`not ok - ${name}`);
    for (const line of String(err?.stack ?? err).split('\n').slice(0, 8)) console.log(`    ${line}`);
    if (critical) broken = true;
  }
}

function textOf(content, what) {
  assert.ok(Array.isArray(content) && content.length > 0, `${what}: expected non-empty content, got ${JSON.stringify(content)}`);
  const item = content.find((c) => c.type === 'text');
  assert.ok(item, `${what}: no text item in ${JSON.stringify(content)}`);
  return item.text;
}

// A short value such as "a" must appear as a token of its own, not as a
// letter inside some other word.
function containsToken(text, value) {
  const escaped = value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^A-Za-z0-9])${escaped}([^A-Za-z0-9]|$)`).test(text);
}

const opts = { timeout: REQUEST_TIMEOUT_MS };
const call = (name, args = {}) => client.callTool({ name, arguments: args }, undefined, opts);

await step('initialize (connect)', async () => {
  await client.connect(transport, opts);
  const info = client.getServerVersion();
  assert.ok(info?.name, `server sent no serverInfo.name: ${JSON.stringify(info)}`);
  const caps = client.getServerCapabilities();
  for (const cap of ['tools', 'resources', 'prompts']) {
    assert.ok(caps?.[cap], `server capabilities lack "${cap}": ${JSON.stringify(caps)}`);
  }
  if (mode === 'http') {
    assert.ok(typeof transport.sessionId === 'string' && transport.sessionId.length > 0,
      'no Mcp-Session-Id from the server after initialize');
  }
}, { critical: true });

await step('tools/list', async () => {
  const { tools } = await client.listTools(undefined, opts);
  const names = tools.map((t) => t.name);
  for (const want of ['test_simple_text', 'test_tool_with_progress', 'test_sampling', 'interop_slow']) {
    assert.ok(names.includes(want), `tool ${want} not listed; got ${names.join(', ')}`);
  }
  for (const t of tools) {
    assert.ok(t.description, `tool ${t.name} has no description`);
    assert.equal(t.inputSchema?.type, 'object', `tool ${t.name}: inputSchema.type`);
  }
});

await step('tools/call content types (text, image, audio, embedded resource)', async () => {
  const res = await client.callTool({ name: 'test_simple_text' }, undefined, opts);
  assert.notEqual(res.isError, true, `isError set: ${JSON.stringify(res)}`);
  assert.equal(textOf(res.content, 'test_simple_text'), SIMPLE_TEXT);
  for (const [name, type] of [['test_image_content', 'image'], ['test_audio_content', 'audio'], ['test_embedded_resource', 'resource']]) {
    const r = await call(name);
    assert.equal(r.content?.[0]?.type, type, `${name}: ${JSON.stringify(r.content?.[0])}`);
    if (type !== 'resource') assert.ok(r.content[0].data && r.content[0].mimeType, `${name}: no data or mimeType`);
    else assert.ok(r.content[0].resource?.uri, `${name}: no resource.uri`);
  }
});

await step('tool error is isError', async () => {
  const res = await call('test_error_handling');
  assert.equal(res.isError, true, `isError not set: ${JSON.stringify(res)}`);
});

await step('x-mcp-header arguments', async () => {
  const res = await call('test_custom_headers', { region: 'eu-west', priority: 3, dryRun: true });
  assert.notEqual(res.isError, true, `isError set: ${JSON.stringify(res)}`);
  assert.ok(JSON.stringify(res).includes('eu-west'), `the region is not in the answer: ${JSON.stringify(res)}`);
});

await step('tools/call test_tool_with_progress (>= 3 progress notifications)', async () => {
  // The SDK hands notifications to their handlers a microtask late but settles responses at once,
  // so when the last progress notification and the response arrive in one read (stdio) its
  // per-call onprogress hook has already been dropped. Count the notifications on the wire
  // instead: every one that carries the call's token, in the order the server sent them.
  const seen = [];
  client.setNotificationHandler(ProgressNotificationSchema, (n) => seen.push(n.params));
  const res = await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
    ...opts,
    onprogress: () => {},
  });
  await new Promise((resolve) => setImmediate(resolve)); // let queued notifications run
  assert.notEqual(res.isError, true, `isError set: ${JSON.stringify(res)}`);
  const token = textOf(res.content, 'test_tool_with_progress');
  assert.ok(seen.every((p) => String(p.progressToken) === token), `progress with a foreign token: ${JSON.stringify(seen)} (tool saw ${token})`);
  assert.ok(seen.length >= 3, `expected >= 3 progress notifications, got ${seen.length}: ${JSON.stringify(seen)}`);
  for (let i = 1; i < seen.length; i++) {
    assert.ok(seen[i].progress >= seen[i - 1].progress, `progress went backwards: ${JSON.stringify(seen)}`);
  }
});

await step('logging (logging/setLevel, notifications/message)', async () => {
  logs.length = 0;
  await client.setLoggingLevel('debug', opts);
  await call('test_tool_with_logging');
  await poll('a log message', () => logs.length > 0);
});

await step('tools/call test_sampling (server -> client sampling/createMessage)', async () => {
  samplingRequests.length = 0;
  const res = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'hi' } }, undefined, opts);
  assert.notEqual(res.isError, true, `isError set: ${JSON.stringify(res)}`);
  assert.equal(samplingRequests.length, 1, `expected 1 sampling/createMessage, got ${samplingRequests.length}`);
  const asked = samplingRequests[0].messages?.[0]?.content;
  assert.equal(asked?.text, 'hi', `sampling request did not carry the prompt: ${JSON.stringify(samplingRequests[0])}`);
  const text = textOf(res.content, 'test_sampling');
  assert.ok(text.includes(CANNED_SAMPLING_ANSWER), `result does not contain the sampling answer: ${JSON.stringify(text)}`);
});

// SDK 1.x speaks the legacy lifecycle only (2025-11-25 at the newest), so the input_required
// tools reach it through the server's legacy shim, as elicitation/create, sampling/createMessage
// and roots/list requests on the tools/call (or prompts/get) request's stream.
const sdkVersion = JSON.parse(readFileSync(new URL('./node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url))).version;
console.log(`note - ${label}: SDK ${sdkVersion} has no 2026-07-28 lifecycle; input_required reaches it through the legacy shim`);
const callText = async (name, args = {}) => toolText(await call(name, args));
await inputRequiredChecks(step, {
  callText,
  promptTextOf: async (name) => promptText(await client.getPrompt({ name }, opts)),
  sampled: CANNED_SAMPLING_ANSWER,
  roots: 1,
});
await legacyRequestChecks(step, {
  callText,
  addRoot: async () => {
    roots.push(SECOND_ROOT);
    await client.sendRootsListChanged();
  },
});

await step('resources (list, templates, read test://static-text)', async () => {
  const { resources } = await client.listResources(undefined, opts);
  assert.ok(resources.some((r) => r.uri === 'test://watched-resource'), `test://watched-resource not listed: ${JSON.stringify(resources)}`);
  const { resourceTemplates } = await client.listResourceTemplates(undefined, opts);
  assert.ok(resourceTemplates.length > 0, 'no resource templates');
  const res = await client.readResource({ uri: 'test://static-text' }, opts);
  assert.ok(Array.isArray(res.contents) && res.contents.length > 0, `no contents: ${JSON.stringify(res)}`);
  assert.equal(res.contents[0].uri, 'test://static-text');
  assert.equal(res.contents[0].text, STATIC_TEXT);
});

await step('prompts (list, get test_prompt_with_arguments)', async () => {
  const { prompts } = await client.listPrompts(undefined, opts);
  assert.ok(prompts.some((p) => p.name === 'test_prompt_with_arguments'), `test_prompt_with_arguments not listed: ${JSON.stringify(prompts)}`);
  const res = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'a', arg2: 'b' } }, opts);
  assert.ok(Array.isArray(res.messages) && res.messages.length > 0, `no messages: ${JSON.stringify(res)}`);
  const text = promptText(res);
  assert.ok(containsToken(text, 'a') && containsToken(text, 'b'), `arguments not in the prompt text: ${JSON.stringify(text)}`);
});

await step('completion', async () => {
  const res = await client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'val' } }, opts);
  assert.equal(res.completion.values.length, 3, JSON.stringify(res));
});

// The change notifications of a legacy session arrive on its GET stream over HTTP, which the
// SDK opens in the background after initialize: trigger until the notification arrives.
async function triggerUntil(what, trigger, seen) {
  await poll(what, async () => {
    await trigger();
    await sleep(200);
    return seen();
  });
}

await step('resource subscription (resources/subscribe, notifications/resources/updated)', async () => {
  await client.subscribeResource({ uri: 'test://watched-resource' }, opts);
  await triggerUntil('notifications/resources/updated', () => call('interop_trigger_resource_updated'), () => updated > 0);
});

await step('list changed (tools, prompts, resources)', async () => {
  for (const list of ['tools', 'prompts', 'resources']) {
    await triggerUntil(`notifications/${list}/list_changed`, () => call('interop_trigger_list_changed', { list }), () => listChanged[list] > 0);
  }
});

await step('cancellation seen by the server (notifications/cancelled)', async () => {
  const ac = new AbortController();
  const slow = client.callTool({ name: 'interop_slow', arguments: { seconds: 60 } }, undefined, { ...opts, signal: ac.signal });
  await poll('interop_slow to start', async () => (await callText('interop_last_cancellation')) === 'running');
  ac.abort('interop: enough');
  await assert.rejects(slow, 'the aborted call did not reject');
  await poll('the server to see the cancellation', async () => {
    const t = await callText('interop_last_cancellation');
    if (t === 'cancelled by the client') return true;
    if (t !== 'running') throw new Error(`the slow call ended as ${t}`);
    return false;
  });
});

if (mode === 'http') {
  await step('terminate session (DELETE)', async () => {
    await transport.terminateSession();
    assert.equal(transport.sessionId, undefined, 'session id still set after DELETE');
  });
}

// Closing is not a step that can be skipped: always release the server.
broken = false;
await step('close', async () => {
  await client.close();
});

clearTimeout(guard);
console.log(`${label}: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || skipped > 0 ? 1 : 0);
