// Child process: an HTTP CONNECT proxy (test/support/connect-proxy.ts, node's http server relaying
// each tunnel's bytes) for the tunnel benchmark, in its own process as a real egress proxy would
// be. Reports its port to the parent over IPC and runs until the parent disconnects.
import { startConnectProxy } from '../../test/support/connect-proxy.ts';

const proxy = await startConnectProxy();
const shutDown = () => void proxy.close().finally(() => process.exit(0));
process.on('disconnect', shutDown);
process.on('SIGTERM', shutDown);
process.send!({ port: proxy.port });
