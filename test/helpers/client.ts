// The service's own typed client (src/client) for tests that read through the API, instead of
// hand-written fetches: the same paths, headers and error handling the CLI and the MCP tools use.
import { apiClient, httpTransport, type ApiClient, type FetchFn } from '../../src/client/api.js';

export interface ClientOptions {
  /** Tenant key (hosted variant), sent as `Authorization: Bearer …`. */
  apiKey?: string;
  /** The transport's fetch, e.g. one that records every error body a test received. */
  fetchFn?: FetchFn;
}

/** The client of the server whose API listens at `baseUrl`. */
export function clientFor(baseUrl: string, opts: ClientOptions = {}): ApiClient {
  return apiClient(httpTransport({ baseUrl, apiKey: opts.apiKey, timeoutMs: 60_000, fetchFn: opts.fetchFn }));
}

/** The rows of one SELECT; throws with the service's error when it refuses the statement. */
export async function queryRows<T = Record<string, unknown>>(api: ApiClient, sql: string): Promise<T[]> {
  const out = await api.runQuery({ body: sql });
  if (!out.ok) throw new Error(`POST /v1/query answered ${out.status}: ${out.body.error.code} ${out.body.error.message}\n${sql}`);
  return out.body as T[];
}
