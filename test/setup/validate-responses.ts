// Every answer the tests receive from the real server's API is checked against the API description
// (the same document GET /openapi.json serves): the status must be documented for the operation and
// the body must match its schema, or the test that made the request fails. Answers from the OTLP
// port (not part of the description) and from other test servers (no uWebSockets header) pass.
// The hosted variant's description is used: it is open mode's plus the bearer requirement (401) on
// every tenant route, so it checks the answers of servers in either mode.
// The description is loaded on the first answer from the API: most files never talk to a server and
// need not import the route table.
let api: Promise<typeof import('../helpers/api.js')> | undefined;

// A worker runs several files one after the other (vitest.config.ts: no isolation), and this file
// runs before each: the fetch it wraps is the one it found the first time, so a check runs once.
const CHECKED = Symbol.for('tds.test.checkedFetch');
const g = globalThis as typeof globalThis & { [CHECKED]?: typeof fetch };
const realFetch = (g[CHECKED] ??= globalThis.fetch);

globalThis.fetch = async function checkedFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const res = await realFetch(input, init);
  if (!res.headers.has('uwebsockets')) return res;
  const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
  const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
  const { checkResponse, fullOpenApi, matchPathTemplate } = await (api ??= import('../helpers/api.js'));
  const doc = fullOpenApi('keys');
  const template = matchPathTemplate(doc, url.pathname);
  if (!template || !doc['paths'][template][method.toLowerCase()]) return res;
  const contentType = res.headers.get('content-type') ?? undefined;
  const text = await res.clone().text();
  const body = contentType?.startsWith('application/json') && text ? (JSON.parse(text) as unknown) : text;
  checkResponse(method, template, res.status, body, contentType ? { contentType, doc } : { doc });
  return res;
};
