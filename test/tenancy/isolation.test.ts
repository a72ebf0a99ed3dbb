// The hosted variant end to end on one real server (SVC_AUTH=keys, embedded control plane): the
// isolation suite (isolation-suite.ts).
import { startHosted } from '../helpers/hosted.js';
import { isolationSuite } from './isolation-suite.js';

isolationSuite(async (env) => {
  const srv = await startHosted(env);
  return {
    entry: srv,
    logs: () => srv.logs,
    async stop() {
      await srv.stop();
      srv.cleanup();
    },
  };
});
