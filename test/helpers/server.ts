import { afterAll, beforeAll } from 'vitest';
import { startChildServer, type ChildServer } from '../../testkit/server.js';

export { startChildServer as startTestServer, type ChildServer as TestServer } from '../../testkit/server.js';

/**
 * The real server for a whole test file: started before its tests (before any later beforeAll) with
 * `env`, stopped and its data removed after them. The returned object is filled in at start.
 */
export function useTestServer(env: Record<string, string> = {}): ChildServer {
  const srv = {} as ChildServer;
  beforeAll(async () => {
    Object.assign(srv, await startChildServer(env));
  });
  afterAll(async () => {
    if (!srv.stop) return;
    await srv.stop();
    srv.cleanup();
  });
  return srv;
}
