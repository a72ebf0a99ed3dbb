export { startChildServer as startTestServer, type ChildServer as TestServer } from '../../bench/lib/server.js';
