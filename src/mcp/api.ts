// The tools' one way to the service: the shared client over HTTP (time limit, the error body on every
// failure, the bearer key). `tds mcp` points it at SVC_URL; /mcp at its own API port.
import { apiClient, httpTransport, type ApiClient, type ApiTarget } from '../client/api.js';

export type { ApiTarget };

/** A 404 is kept as the service's answer (an unknown trace), not rewritten as an unserved endpoint. */
export function httpApi(target: ApiTarget): ApiClient {
  return apiClient(httpTransport({ ...target, keep404: true }));
}
