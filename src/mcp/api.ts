// The tools' one way to the service: its HTTP API, through the CLI's client (time limit, the error
// body on every failure, the bearer key). `tds mcp` points it at SVC_URL; /mcp at its own API port.
import { request } from '../cli/http.js';
import type { ApiCall } from './tools.js';

export interface ApiTarget {
  baseUrl: string;
  apiKey?: string | undefined;
  timeoutMs: number;
}

export function httpApi(target: ApiTarget): ApiCall {
  return (r) =>
    request({
      baseUrl: target.baseUrl,
      apiKey: target.apiKey,
      timeoutMs: target.timeoutMs,
      method: r.method,
      path: r.path,
      query: r.query,
      body: r.body,
      keep404: true,
    });
}
