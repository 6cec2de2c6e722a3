// The TypeScript SDK v2 client (@modelcontextprotocol/client) against examples/everything, in
// either lifecycle, over Streamable HTTP or stdio:
//
//   node interop/v2/client.mjs modern http  http://127.0.0.1:PORT/mcp
//   node interop/v2/client.mjs legacy stdio ./bin/everything -stdio
//
// modern pins 2026-07-28 (server/discover; input_required answered by the client and retried;
// subscriptions/listen); legacy is the client's default 'legacy' negotiation (initialize at
// 2025-11-25; the server's own requests; resources/subscribe and the GET stream).
//
// Prints "ok - <check>" or "not ok - <check>: <why>" per check, then a summary; exits 1 when one
// failed. make interop runs it.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import {
  FIRST_ROOT, SECOND_ROOT, formAnswer, inputRequiredChecks, legacyRequestChecks, poll, promptText, sleep, toolText,
} from '../common.mjs';

const [lifecycle, mode, ...target] = process.argv.slice(2);
if (!['legacy', 'modern'].includes(lifecycle) || !['http', 'stdio'].includes(mode) || target.length === 0) {
  console.error('usage: node interop/v2/client.mjs legacy|modern http <url> | stdio <command> [args...]');
  process.exit(2);
}
const modern = lifecycle === 'modern';
const label = `ts-v2/${lifecycle}/${mode}`;
let passed = 0;
let failed = 0;
async function check(name, f) {
  try {
    await f();
    passed++;
    console.log(`ok - ${label} ${name}`);
  } catch (e) {
    failed++;
    console.log(`not ok - ${label} ${name}: ${e?.message ?? e}`);
  }
}

const SAMPLED = 'sampled by ts-v2';
const client = new Client({ name: 'mcpkit-interop-ts-v2', version: '1.0.0' }, {
  capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } },
  ...(modern ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}),
});
// The same handlers answer the server's requests (legacy) and the input requests embedded in
// input_required results (2026-07-28).
const roots = [FIRST_ROOT];
let sampledCount = 0;
client.setRequestHandler('sampling/createMessage', async () => {
  sampledCount++;
  return { model: 'interop', role: 'assistant', content: { type: 'text', text: SAMPLED } };
});
client.setRequestHandler('elicitation/create', async (r) => ({ action: 'accept', content: formAnswer(r.params.requestedSchema) }));
client.setRequestHandler('roots/list', async () => ({ roots: [...roots] }));

const listChanged = { tools: 0, prompts: 0, resources: 0 };
let updated = 0;
const logs = [];
for (const list of Object.keys(listChanged)) {
  client.setNotificationHandler(`notifications/${list}/list_changed`, () => { listChanged[list]++; });
}
client.setNotificationHandler('notifications/resources/updated', (n) => { if (n.params?.uri === 'test://watched-resource') updated++; });
client.setNotificationHandler('notifications/message', (n) => { logs.push(n.params); });

const transport = mode === 'http'
  ? new StreamableHTTPClientTransport(new URL(target[0]))
  : new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: 'ignore' });

const call = (name, args = {}, opts) => client.callTool({ name, arguments: args }, opts);
const callText = async (name, args = {}) => toolText(await call(name, args));

await check(modern ? 'connect (server/discover, 2026-07-28)' : 'connect (initialize, 2025-11-25)', async () => {
  await client.connect(transport);
  const v = client.getNegotiatedProtocolVersion();
  if (v !== (modern ? '2026-07-28' : '2025-11-25')) throw new Error(`negotiated ${v}`);
});
await check('tools/list', async () => {
  const { tools } = await client.listTools();
  if (!tools.some((t) => t.name === 'interop_slow')) throw new Error('interop_slow is not listed');
});
await check('tools/call content types', async () => {
  for (const [name, want] of [['test_simple_text', 'text'], ['test_image_content', 'image'], ['test_audio_content', 'audio'], ['test_embedded_resource', 'resource']]) {
    const r = await call(name);
    if (r.content?.[0]?.type !== want) throw new Error(`${name}: ${JSON.stringify(r.content?.[0])}`);
  }
});
await check('tool error is isError', async () => {
  const r = await call('test_error_handling');
  if (!r.isError) throw new Error('isError is not set');
});
await check('x-mcp-header arguments', async () => {
  const r = await call('test_custom_headers', { region: 'eu-west', priority: 3, dryRun: true });
  if (r.isError || !JSON.stringify(r).includes('eu-west')) throw new Error(JSON.stringify(r));
});
await check('resources', async () => {
  await client.listResources();
  const r = await client.readResource({ uri: 'test://static-text' });
  if (!r.contents?.[0]?.text?.includes('static text')) throw new Error(JSON.stringify(r));
});
await check('prompts', async () => {
  await client.listPrompts();
  const r = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'a', arg2: 'b' } });
  if (!r.messages?.length) throw new Error('no messages');
});
await check('completion', async () => {
  const r = await client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'val' } });
  if (r.completion.values.length !== 3) throw new Error(JSON.stringify(r));
});
await check('progress', async () => {
  let n = 0;
  await call('test_tool_with_progress', {}, { onprogress: () => { n++; } });
  if (n === 0) throw new Error('no progress notification');
});
// On 2026-07-28 there is no logging/setLevel: each request carries its level in _meta. Client
// 2.3.1 has no setting for it, so the call sets the key itself (the client keeps a caller's _meta
// keys over the ones it adds).
await check(modern ? "logging (logLevel in the request's _meta)" : 'logging (logging/setLevel)', async () => {
  if (modern) {
    await client.callTool({ name: 'test_tool_with_logging', arguments: {}, _meta: { 'io.modelcontextprotocol/logLevel': 'debug' } });
  } else {
    await client.setLoggingLevel('debug');
    await call('test_tool_with_logging');
  }
  await poll('a log message', () => logs.length > 0);
});
await inputRequiredChecks(check, {
  callText,
  promptTextOf: async (name) => promptText(await client.getPrompt({ name })),
  sampled: SAMPLED,
  roots: 1,
});
if (modern) {
  // The same round by hand (allowInputRequired): the result carries the embedded request and a
  // sealed requestState (not the handler's plaintext); a retry with a tampered state is refused
  // before the tool runs, one with the state as issued completes.
  await check('input_required by hand: sealed requestState, a tampered one refused', async () => {
    const name = 'test_input_required_result_tampered_state';
    const r = await client.callTool({ name, arguments: {} }, { allowInputRequired: true });
    if (r.resultType !== 'input_required' || r.inputRequests?.confirm?.method !== 'elicitation/create') {
      throw new Error(`first answer ${JSON.stringify(r)}`);
    }
    if (typeof r.requestState !== 'string' || r.requestState === '' || r.requestState.includes('integrity')) {
      throw new Error(`requestState ${JSON.stringify(r.requestState)} is not sealed`);
    }
    const inputResponses = { confirm: { action: 'accept', content: { ok: true } } };
    const err = await client.callTool({ name, arguments: {}, inputResponses, requestState: `${r.requestState}-TAMPERED` })
      .then((res) => new Error(`a tampered requestState was accepted: ${JSON.stringify(res)}`), (e) => e);
    if (err.code !== -32602 || !String(err.message).includes('Invalid or expired requestState')) {
      throw new Error(`tampered requestState: ${err.code} ${err.message}`);
    }
    const done = await client.callTool({ name, arguments: {}, inputResponses, requestState: r.requestState });
    if (toolText(done) !== 'integrity-ok: state verified') throw new Error(`retry ${JSON.stringify(done)}`);
  });
  await check('subscriptions/listen (list changes, resource updates)', async () => {
    const sub = await client.listen({ toolsListChanged: true, resourceSubscriptions: ['test://watched-resource'] });
    if (!sub.honoredFilter.toolsListChanged || !sub.honoredFilter.resourceSubscriptions?.length) {
      throw new Error(`honored ${JSON.stringify(sub.honoredFilter)}`);
    }
    await call('interop_trigger_list_changed', { list: 'tools' });
    await call('interop_trigger_resource_updated', {});
    await poll('the change notifications', () => listChanged.tools > 0 && updated > 0);
    await sub.close();
    if ((await sub.closed) !== 'local') throw new Error('the subscription did not close locally');
  });
} else {
  await check('sampling (server-to-client request)', async () => {
    const before = sampledCount;
    const t = await callText('test_sampling', { prompt: 'hi' });
    if (t !== `LLM response: ${SAMPLED}` || sampledCount !== before + 1) throw new Error(`got ${JSON.stringify(t)}`);
  });
  await legacyRequestChecks(check, {
    callText,
    addRoot: async () => {
      roots.push(SECOND_ROOT);
      await client.sendRootsListChanged();
    },
  });
  // Over HTTP the change notifications of a legacy session arrive on its GET stream, which the
  // client opens in the background after initialize: trigger until they arrive.
  const triggerUntil = (what, trigger, seen) => poll(what, async () => {
    await trigger();
    await sleep(200);
    return seen();
  });
  await check('resource subscription (resources/subscribe)', async () => {
    await client.subscribeResource({ uri: 'test://watched-resource' });
    await triggerUntil('notifications/resources/updated', () => call('interop_trigger_resource_updated'), () => updated > 0);
  });
  await check('list changed (tools, prompts, resources)', async () => {
    for (const list of Object.keys(listChanged)) {
      await triggerUntil(`notifications/${list}/list_changed`, () => call('interop_trigger_list_changed', { list }), () => listChanged[list] > 0);
    }
  });
}
await check('cancellation seen by the server', async () => {
  const ac = new AbortController();
  const slow = call('interop_slow', { seconds: 60 }, { signal: ac.signal }).catch(() => {});
  await poll('interop_slow to start', async () => (await callText('interop_last_cancellation')) === 'running');
  ac.abort();
  await slow;
  await poll('the server to see the cancellation', async () => {
    const t = await callText('interop_last_cancellation');
    if (t === 'cancelled by the client') return true;
    // Over HTTP on 2026-07-28 the v2 client may end the request's stream instead: the
    // 2026-07-28 HTTP way to cancel.
    if (modern && mode === 'http' && t.startsWith('ended: ')) return true;
    if (t !== 'running') throw new Error(`the slow call ended as ${t}`);
    return false;
  });
});
await check('close', () => client.close());
console.log(`interop ${label}: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
