// A small MCP Apps host page, built on the official TypeScript client and the official host
// bridge (AppBridge of @modelcontextprotocol/ext-apps). It connects to the server given in the
// query (?server=URL&sandbox=URL&lifecycle=legacy|modern), calls show_tally as the model would,
// reads the tool's ui:// resource and renders it through a sandbox proxy page on a second origin
// (the double-iframe layout the specification recommends for web hosts). The bridge forwards the
// view's tools/call requests to the server, for tools whose visibility includes "app" only.
// esbuild bundles it into dist/host.js (scripts/apps-host.sh).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  AppBridge, PostMessageTransport, RESOURCE_MIME_TYPE, buildAllowAttribute, getToolUiResourceUri, isToolVisibilityAppOnly,
} from '@modelcontextprotocol/ext-apps/app-bridge';

const EXTENSION_ID = 'io.modelcontextprotocol/ui';
const $ = (id) => document.getElementById(id);
const log = (line) => { $('log').textContent += line + '\n'; };
const query = new URLSearchParams(location.search);
const lifecycle = query.get('lifecycle') === 'modern' ? 'modern' : 'legacy';

function visibleToApp(tool) {
  const v = tool?._meta?.ui?.visibility;
  return !Array.isArray(v) || v.length === 0 || v.includes('app');
}

async function main() {
  const client = new Client({ name: 'mcpkit-apps-host', version: '1.0.0' }, {
    capabilities: { extensions: { [EXTENSION_ID]: { mimeTypes: [RESOURCE_MIME_TYPE] } } },
    ...(lifecycle === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}),
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(query.get('server'))));
  $('protocol').textContent = client.getNegotiatedProtocolVersion();
  const serverExt = client.getServerCapabilities()?.extensions?.[EXTENSION_ID];
  $('server-ext').textContent = JSON.stringify(serverExt ?? null);

  const { tools } = await client.listTools();
  // What the model would be offered: the app-only tools are kept from it.
  $('model-tools').textContent = tools.filter((t) => !isToolVisibilityAppOnly(t)).map((t) => t.name).join(' ');
  const tool = tools.find((t) => t.name === 'show_tally');
  const uri = getToolUiResourceUri(tool);
  const args = { name: 'votes' };
  const result = await client.callTool({ name: tool.name, arguments: args });
  $('tool-text').textContent = result.content?.[0]?.text ?? '';
  log(`called ${tool.name}, its UI is ${uri}`);

  const { contents } = await client.readResource({ uri });
  const content = contents[0];
  if (content.mimeType !== RESOURCE_MIME_TYPE) throw new Error(`${uri} is ${content.mimeType}`);
  const ui = content._meta?.ui ?? {};

  const bridge = new AppBridge(null, { name: 'mcpkit-apps-host', version: '1.0.0' }, { serverTools: {}, logging: {} }, {
    hostContext: { theme: 'light', displayMode: 'inline', platform: 'web' },
  });
  bridge.oncalltool = async (params) => {
    const target = tools.find((t) => t.name === params.name);
    if (!target || !visibleToApp(target)) throw new Error(`the view may not call ${params.name}`);
    log(`the view calls ${params.name} ${JSON.stringify(params.arguments)}`);
    const r = await client.callTool(params);
    $('app-calls').textContent = String(Number($('app-calls').textContent) + 1);
    return r;
  };
  bridge.addEventListener('sandboxready', () => {
    bridge.sendSandboxResourceReady({ html: content.text, sandbox: 'allow-scripts', csp: ui.csp, permissions: ui.permissions });
  });
  bridge.oninitialized = async () => {
    log('the view is initialized');
    await bridge.sendToolInput({ arguments: args });
    await bridge.sendToolResult(result);
    document.body.dataset.state = 'rendered';
  };
  bridge.addEventListener('sizechange', ({ height }) => { if (height) frame.style.height = `${height}px`; });

  const frame = document.createElement('iframe');
  frame.id = 'app';
  frame.title = 'tally app';
  frame.src = `${query.get('sandbox')}?host=${encodeURIComponent(location.origin)}`;
  frame.setAttribute('sandbox', 'allow-scripts allow-same-origin');
  const allow = buildAllowAttribute(ui.permissions);
  if (allow) frame.setAttribute('allow', allow);
  frame.style.border = ui.prefersBorder === false ? 'none' : '1px solid #ccc';
  $('frame-box').appendChild(frame);
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
}

main().catch((e) => {
  document.body.dataset.state = 'failed';
  $('error').textContent = String(e?.stack ?? e);
});
