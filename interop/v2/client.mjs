// The TypeScript SDK v2 client (@modelcontextprotocol/client) against examples/everything in the
// 2026-07-28 lifecycle, over Streamable HTTP or stdio:
//
//   node interop/v2/client.mjs http  http://127.0.0.1:PORT/mcp
//   node interop/v2/client.mjs stdio ./bin/everything -stdio
//
// Prints "ok - <check>" or "not ok - <check>: <why>" per check, then a summary; exits 1 when one
// failed. make interop runs it.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [mode, ...target] = process.argv.slice(2);
const label = `ts-v2/modern/${mode}`;
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
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function poll(what, f) {
  const end = Date.now() + 10000;
  for (;;) {
    if (await f()) return;
    if (Date.now() > end) throw new Error(`${what} did not happen within 10 s`);
    await sleep(100);
  }
}
const text = (r) => (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('');

const client = new Client({ name: 'mcpkit-interop-ts-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
let toolsChanged = 0;
let updated = 0;
client.setNotificationHandler('notifications/tools/list_changed', () => { toolsChanged++; });
client.setNotificationHandler('notifications/resources/updated', (n) => { if (n.params?.uri === 'test://watched-resource') updated++; });

const transport = mode === 'http'
  ? new StreamableHTTPClientTransport(new URL(target[0]))
  : new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: 'ignore' });

const call = (name, args = {}, opts) => client.callTool({ name, arguments: args }, opts);

await check('connect (server/discover, 2026-07-28)', () => client.connect(transport));
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
await check('subscriptions/listen (list changes, resource updates)', async () => {
  const sub = await client.listen({ toolsListChanged: true, resourceSubscriptions: ['test://watched-resource'] });
  if (!sub.honoredFilter.toolsListChanged || !sub.honoredFilter.resourceSubscriptions?.length) {
    throw new Error(`honored ${JSON.stringify(sub.honoredFilter)}`);
  }
  await call('interop_trigger_list_changed', { list: 'tools' });
  await call('interop_trigger_resource_updated', {});
  await poll('the change notifications', () => toolsChanged > 0 && updated > 0);
  await sub.close();
  if ((await sub.closed) !== 'local') throw new Error('the subscription did not close locally');
});
await check('cancellation seen by the server', async () => {
  const ac = new AbortController();
  const slow = call('interop_slow', { seconds: 60 }, { signal: ac.signal }).catch(() => {});
  await poll('interop_slow to start', async () => text(await call('interop_last_cancellation')) === 'running');
  ac.abort();
  await slow;
  await poll('the server to see the cancellation', async () => {
    const t = text(await call('interop_last_cancellation'));
    if (t === 'cancelled by the client') return true;
    // Over HTTP the v2 client may end the request's stream instead: the 2026-07-28 HTTP way.
    if (mode === 'http' && t.startsWith('ended: ')) return true;
    if (t !== 'running') throw new Error(`the slow call ended as ${t}`);
    return false;
  });
});
await check('close', () => client.close());
console.log(`interop ${label}: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
