// What the TypeScript interop clients (interop/client.mjs, SDK 1.x, and interop/v2/client.mjs,
// SDK v2) share: the answers a user would give, polling, and the checks of the fixture's
// input_required tools. Plain JavaScript with no dependencies, so both packages can import it.

// The roots the clients declare: FIRST_ROOT from the start, SECOND_ROOT added by the "roots list
// changed" check.
export const FIRST_ROOT = { uri: 'file:///interop/first', name: 'first' };
export const SECOND_ROOT = { uri: 'file:///interop/second', name: 'second' };

// The form a user fills in for an elicitation: every property of the requested schema gets a
// value of its type ("interop-<name>" for a string, the first value of an enum, true, 1). The
// fixture's tools echo the values back, so the checks can tell the answer arrived whole.
export function formAnswer(schema) {
  const out = {};
  for (const [name, p] of Object.entries(schema?.properties ?? {})) {
    if (Array.isArray(p.enum) && p.enum.length > 0) out[name] = p.enum[0];
    else if (p.type === 'boolean') out[name] = true;
    else if (p.type === 'integer' || p.type === 'number') out[name] = 1;
    else if (p.type === 'string') out[name] = `interop-${name}`;
  }
  return out;
}

// The text blocks of a tool result or the text of a prompt's messages, joined.
export const toolText = (r) => (r?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('');
export const promptText = (r) => (r?.messages ?? []).map((m) => (m.content?.type === 'text' ? m.content.text : '')).join('');

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// poll calls f until it returns true, for at most 10 s.
export async function poll(what, f) {
  const end = Date.now() + 10_000;
  for (;;) {
    if (await f()) return;
    if (Date.now() > end) throw new Error(`${what} did not happen within 10 s`);
    await sleep(100);
  }
}

function expect(got, want) {
  if (got !== want) throw new Error(`got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
}

// The checks of the fixture's input_required tools and prompt, the same for every client: on
// 2026-07-28 the client fulfils the embedded requests and retries with inputResponses and the
// echoed requestState; on the legacy lifecycle the server's shim sends them to the client as
// elicitation/create, sampling/createMessage and roots/list requests. callText(name) returns a
// tool's text, promptTextOf(name) a prompt's; sampled is what the client's sampling handler
// answers, roots how many roots it declares.
export async function inputRequiredChecks(check, { callText, promptTextOf, sampled, roots }) {
  await check('input_required: elicitation', async () => {
    expect(await callText('test_input_required_result_elicitation'), 'Hello, interop-name!');
  });
  await check('input_required: roots', async () => {
    expect(await callText('test_input_required_result_list_roots'), `Found ${roots} root(s)`);
  });
  await check('input_required: requestState echoed', async () => {
    expect(await callText('test_input_required_result_request_state'), 'state-ok: requestState validated');
  });
  await check('input_required: two rounds, new requestState each', async () => {
    expect(await callText('test_input_required_result_multi_round'), 'Multi-round complete for interop-name who likes interop-color');
  });
  await check('input_required: elicitation, sampling and roots at once', async () => {
    expect(await callText('test_input_required_result_multiple_inputs'), `Name: interop-name; Greeting: ${sampled}; Roots: ${roots}`);
  });
  await check('input_required: prompts/get', async () => {
    expect(await promptTextOf('test_input_required_result_prompt'), 'Prompt with context: interop-context');
  });
}

// The legacy checks of requests the server sends on its own: elicitation/create from
// test_elicitation, and notifications/roots/list_changed from the client (addRoot adds
// SECOND_ROOT and sends it), which the server counts (interop_roots_changed) and after which it
// finds both roots.
export async function legacyRequestChecks(check, { callText, addRoot }) {
  await check('elicitation (server-to-client request)', async () => {
    expect(await callText('test_elicitation', { message: 'Who are you?' }),
      'User response: action=accept, content={"email":"interop-email","username":"interop-username"}');
  });
  await check('roots list changed (client-to-server notification)', async () => {
    const before = await callText('interop_roots_changed');
    await addRoot();
    await poll('the server to see notifications/roots/list_changed', async () => (await callText('interop_roots_changed')) !== before);
    expect(await callText('test_input_required_result_list_roots'), 'Found 2 root(s)');
  });
}
