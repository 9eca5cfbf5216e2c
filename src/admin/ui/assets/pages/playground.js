// Playgrounds: send a chat through one of gw's listeners and routes and watch it stream; connect
// to an MCP route, list its tools and call one; evaluate a CEL expression against a recorded
// request (the variables policies see, credentials redacted). Every call goes through gw's own
// listener as a client's would; a key typed here goes to gw only and is not kept.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../lib/api.js';
import { Pending, useApi } from '../lib/components.js';
import { readEvents } from '../lib/event-stream.js';
import { html } from '../lib/html.js';

const listenerKey = (l) => `${l.gateway}/${l.listener}`;

/** Paths worth offering for a kind of rule: each PathPrefix or Exact path of such rules. */
function rulePaths(listener, kinds, suffix) {
  const paths = [];
  for (const route of listener?.routes ?? [])
    for (const rule of route.rules)
      if (rule.kinds.some((k) => kinds.includes(k)))
        for (const path of rule.paths) {
          if (path.type === 'RegularExpression') continue;
          const base = path.value.replace(/\/$/, '');
          paths.push({ route: route.route, path: path.type === 'Exact' ? path.value : suffix(base) });
        }
  return paths;
}

const chatPath = (base) => (base.endsWith('/v1') ? `${base}/chat/completions` : `${base}/v1/chat/completions`);

function ListenerSelect({ id, listeners, value, onChange }) {
  return html`<label for=${id}>Listener</label>
    <select id=${id} value=${value} onChange=${(e) => onChange(e.target.value)}>
      ${listeners.map((l) => html`<option value=${listenerKey(l)}>${l.gateway} · ${l.listener} (${l.protocol} ${l.port})${l.bound ? '' : ' — not bound'}</option>`)}
    </select>`;
}

function PathField({ id, value, onChange, suggestions, label = 'Path' }) {
  return html`<label for=${id}>${label}</label>
    <input id=${id} value=${value} onInput=${(e) => onChange(e.target.value)} list=${`${id}-list`} required />
    <datalist id=${`${id}-list`}>${suggestions.map((s) => html`<option value=${s.path}>${s.route}</option>`)}</datalist>`;
}

function Chat({ listeners }) {
  const [key, setKey] = useState(listenerKey(listeners[0]));
  const listener = listeners.find((l) => listenerKey(l) === key);
  const suggestions = rulePaths(listener, ['ai', 'models'], chatPath);
  const [path, setPath] = useState(suggestions[0]?.path ?? '/v1/chat/completions');
  const [model, setModel] = useState('');
  const [apiKey, setApiKey] = useState('');
  const [prompt, setPrompt] = useState('');
  const [messages, setMessages] = useState([]);
  const [answer, setAnswer] = useState();
  const [busy, setBusy] = useState(false);

  const send = async (event) => {
    event.preventDefault();
    const conversation = [...messages, { role: 'user', content: prompt }];
    setMessages(conversation);
    setPrompt('');
    setBusy(true);
    let text = '';
    setAnswer({ text: '', streaming: true });
    try {
      const response = await fetch('/ui/api/playground/chat', {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'x-gw-ui': '1', 'content-type': 'application/json' },
        body: JSON.stringify({
          gateway: listener.gateway,
          listener: listener.listener,
          path,
          model,
          apiKey,
          messages: conversation,
        }),
      });
      if (!response.ok) {
        const body = await response.json().catch(() => ({}));
        throw new ApiError(response.status, body);
      }
      let usage;
      let error;
      let done;
      await readEvents(response, (name, data) => {
        if (name === 'delta') {
          text += data.text;
          setAnswer({ text, streaming: true });
        } else if (name === 'usage') usage = data;
        else if (name === 'error') error = data;
        else if (name === 'done') done = data;
      });
      setAnswer({ text, usage, error, done, streaming: false });
      if (text !== '') setMessages([...conversation, { role: 'assistant', content: text }]);
    } catch (failure) {
      setAnswer({ text, error: { message: failure.message }, streaming: false });
    } finally {
      setBusy(false);
    }
  };

  return html`<section class="card" aria-labelledby="chat-title">
    <h2 id="chat-title">Chat</h2>
    <form class="fields" onSubmit=${send}>
      <${ListenerSelect} id="chat-listener" listeners=${listeners} value=${key} onChange=${setKey} />
      <${PathField} id="chat-path" value=${path} onChange=${setPath} suggestions=${suggestions} />
      <label for="chat-model">Model</label>
      <input id="chat-model" value=${model} onInput=${(e) => setModel(e.target.value)} required placeholder="gpt-4o-mini" />
      <label for="chat-key">Key for the route <span class="muted">(optional; sent to gw only)</span></label>
      <input id="chat-key" type="password" autocomplete="off" value=${apiKey} onInput=${(e) => setApiKey(e.target.value)} />
      <label for="chat-prompt">Message</label>
      <textarea id="chat-prompt" rows="3" value=${prompt} onInput=${(e) => setPrompt(e.target.value)} required></textarea>
      <div>
        <button type="submit" disabled=${busy || !listener}>${busy ? 'Streaming…' : 'Send'}</button>
        <button type="button" class="link" onClick=${() => {
          setMessages([]);
          setAnswer(undefined);
        }}>New conversation</button>
      </div>
    </form>
    <ol class="transcript" aria-label="Conversation">
      ${messages.map((m) => html`<li class=${m.role}><strong>${m.role}</strong> ${m.content}</li>`)}
    </ol>
    ${
      answer &&
      html`<div class="answer" aria-live="polite" aria-busy=${answer.streaming}>
      ${answer.streaming && html`<p class="streaming" data-testid="chat-stream">${answer.text}</p>`}
      ${answer.error && html`<p class="error" role="alert">${answer.error.status ? `${answer.error.status}: ` : ''}${answer.error.message}</p>`}
      ${answer.usage && html`<p class="muted" data-testid="chat-usage">${answer.usage.inputTokens} input tokens, ${answer.usage.outputTokens} output tokens${answer.done?.model ? ` · ${answer.done.model}` : ''}</p>`}
    </div>`
    }
  </section>`;
}

function exampleArguments(schema) {
  const out = {};
  for (const [name, property] of Object.entries(schema?.properties ?? {}))
    out[name] =
      property.type === 'number' || property.type === 'integer' ? 0 : property.type === 'boolean' ? false : '';
  return JSON.stringify(out, null, 2);
}

function Mcp({ listeners }) {
  const [key, setKey] = useState(listenerKey(listeners[0]));
  const listener = listeners.find((l) => listenerKey(l) === key);
  const suggestions = rulePaths(listener, ['mcp'], (base) => base || '/mcp');
  const [path, setPath] = useState(suggestions[0]?.path ?? '/mcp');
  const [tools, setTools] = useState();
  const [tool, setTool] = useState();
  const [args, setArgs] = useState('{}');
  const [result, setResult] = useState();
  const [error, setError] = useState();
  const [busy, setBusy] = useState(false);
  const target = () => ({ gateway: listener.gateway, listener: listener.listener, path });

  const list = async (event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setResult(undefined);
    try {
      const answer = await api('playground/mcp/tools', { method: 'POST', body: target() });
      setTools(answer);
      const first = answer.tools[0];
      setTool(first?.name);
      setArgs(exampleArguments(first?.inputSchema));
    } catch (failure) {
      setError(failure.message);
    } finally {
      setBusy(false);
    }
  };
  const call = async (event) => {
    event.preventDefault();
    let parsed;
    try {
      parsed = JSON.parse(args);
    } catch (failure) {
      setError(`Arguments: ${failure.message}`);
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      setResult(
        (await api('playground/mcp/call', { method: 'POST', body: { ...target(), tool, arguments: parsed } })).result,
      );
    } catch (failure) {
      setError(failure.message);
    } finally {
      setBusy(false);
    }
  };
  const chosen = tools?.tools.find((t) => t.name === tool);

  return html`<section class="card" aria-labelledby="mcp-title">
    <h2 id="mcp-title">MCP tools</h2>
    <form class="fields" onSubmit=${list}>
      <${ListenerSelect} id="mcp-listener" listeners=${listeners} value=${key} onChange=${setKey} />
      <${PathField} id="mcp-path" value=${path} onChange=${setPath} suggestions=${suggestions} label="MCP path" />
      <div><button type="submit" disabled=${busy || !listener}>List tools</button></div>
    </form>
    ${
      tools &&
      html`<form class="fields" onSubmit=${call}>
      <label for="mcp-tool">Tool <span class="muted">(${tools.tools.length} offered)</span></label>
      <select id="mcp-tool" value=${tool} onChange=${(e) => {
        setTool(e.target.value);
        setArgs(exampleArguments(tools.tools.find((t) => t.name === e.target.value)?.inputSchema));
      }}>
        ${tools.tools.map((t) => html`<option value=${t.name}>${t.name}</option>`)}
      </select>
      ${chosen?.description && html`<p class="muted">${chosen.description}</p>`}
      <label for="mcp-args">Arguments (JSON)</label>
      <textarea id="mcp-args" rows="4" value=${args} onInput=${(e) => setArgs(e.target.value)}></textarea>
      <div><button type="submit" disabled=${busy || !tool}>Call</button></div>
    </form>`
    }
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${
      result &&
      html`<div aria-live="polite"><h3>Result${result.isError ? ' (the tool reported an error)' : ''}</h3>
      ${(result.content ?? []).map((part) => (part.type === 'text' ? html`<pre data-testid="mcp-result">${part.text}</pre>` : html`<pre>${JSON.stringify(part, null, 2)}</pre>`))}
    </div>`
    }
  </section>`;
}

function Cel({ initialRecord }) {
  const [id, setId] = useState(initialRecord ?? '');
  const [recent, setRecent] = useState([]);
  const [variables, setVariables] = useState();
  const [expression, setExpression] = useState('request.method + " " + request.path');
  const [outcome, setOutcome] = useState();
  const [error, setError] = useState();

  useEffect(() => {
    api('traffic/recent?limit=20').then(
      (list) => {
        setRecent(list.entries);
        if (!id && list.entries[0]) setId(list.entries[0].id);
      },
      (failure) => setError(failure.message),
    );
  }, []);
  useEffect(() => {
    if (!id) return;
    setVariables(undefined);
    api(`traffic/record?id=${encodeURIComponent(id)}`).then(
      (answer) => setVariables(answer.variables),
      (failure) => setVariables({ error: failure.message }),
    );
  }, [id]);

  const evaluate = async (event) => {
    event.preventDefault();
    setOutcome(undefined);
    try {
      setOutcome({ value: (await api('playground/cel', { method: 'POST', body: { id, expression } })).value });
    } catch (failure) {
      setOutcome({ error: failure.message });
    }
  };

  return html`<section class="card" id="cel" aria-labelledby="cel-title">
    <h2 id="cel-title">CEL against a recorded request</h2>
    <p class="muted">The variables policies and the access log see (docs/cel.md); credential headers are redacted. Requests are recorded while the Traffic page (or this one) is open.</p>
    <form class="fields" onSubmit=${evaluate}>
      <label for="cel-record">Request</label>
      <select id="cel-record" value=${id} onChange=${(e) => setId(e.target.value)}>
        ${id && !recent.some((e) => e.id === id) && html`<option value=${id}>${id}</option>`}
        ${recent.map((e) => html`<option value=${e.id}>${new Date(e.time).toLocaleTimeString()} ${e.fields['http.request.method']} ${e.fields['url.path']} → ${e.fields['http.response.status_code'] ?? '—'}</option>`)}
      </select>
      <label for="cel-expression">Expression</label>
      <textarea id="cel-expression" rows="2" value=${expression} onInput=${(e) => setExpression(e.target.value)} required></textarea>
      <div><button type="submit" disabled=${!id}>Evaluate</button></div>
    </form>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${
      outcome &&
      (outcome.error
        ? html`<p class="error" role="alert">${outcome.error}</p>`
        : html`<div aria-live="polite"><h3>Value</h3><pre data-testid="cel-value">${JSON.stringify(outcome.value, null, 2)}</pre></div>`)
    }
    <details>
      <summary>Variables of this request</summary>
      ${variables ? html`<pre>${variables.error ?? JSON.stringify(variables, null, 2)}</pre>` : html`<p class="muted">${id ? 'Loading…' : 'No request recorded yet.'}</p>`}
    </details>
  </section>`;
}

export default function Playground({ query }) {
  const state = useApi('playground/targets');
  if (!state.data) return html`<h1>Playground</h1><${Pending} state=${state} />`;
  const listeners = state.data.listeners;
  return html`<h1>Playground</h1>
    ${
      listeners.length === 0
        ? html`<p class="muted">No HTTP listener is served: chats and MCP calls go through one.</p>`
        : html`
      <${Chat} listeners=${listeners} />
      <${Mcp} listeners=${listeners} />`
    }
    <${Cel} initialRecord=${query.get('record') ?? undefined} />`;
}
