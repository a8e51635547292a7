// Starts the open-source Browserless server (installed from npm by tests/remote/service.py)
// with only its Chromium routes: its start-up check refuses to run unless every browser
// it knows (Chrome, Edge, Firefox, WebKit) is installed, so their routes are disabled.
// Usage: node browserless_launcher.mjs <install dir>; PORT, TOKEN, CONCURRENT, QUEUED from env.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = process.argv[2];
const bl = await import(
  pathToFileURL(join(dir, 'node_modules/@browserless.io/browserless/build/exports.js')).href
);
const server = new bl.Browserless();
const off = [
  bl.BrowserlessChromeRoutes,
  bl.BrowserlessEdgeRoutes,
  bl.BrowserlessFirefoxRoutes,
  bl.BrowserlessWebKitRoutes,
].flatMap((routes) => Object.values(routes));
server.disableRoutes(...off);
await server.start();
console.log('BROWSERLESS READY');
const stop = async () => {
  await server.stop().catch(() => {});
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
